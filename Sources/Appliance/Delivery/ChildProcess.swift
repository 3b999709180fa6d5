import Foundation
import Glibc

/// Runs a program to completion with posix_spawn: stdin from a file, stderr collected (and
/// stdout with it, or discarded), a deadline after which it is killed with everything it
/// started (it leads a process group of its own, so no grandchild outlives the deadline).
///
/// Not Foundation's `Process`: that spawns children with the calling thread's signal mask, and
/// the dispatch threads this runs on block nearly every signal, so a child could not even be
/// stopped with SIGTERM. Here the child starts with an empty mask and default handlers.
/// Blocking: call it off the cooperative pool.
enum ChildProcess {
    enum Exit: Equatable {
        case status(Int32)
        case signal(Int32)
        case timedOut
    }

    struct SpawnError: Error { var code: Int32 }

    /// Variables systemd gives the service alone: a child seeing `NOTIFY_SOCKET` would speak
    /// for the service (systemd's tools send `ERRNO=` there when they fail).
    static let serviceOnlyVariables: Set<String> = ["NOTIFY_SOCKET", "WATCHDOG_PID", "WATCHDOG_USEC", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    /// This process's environment without ``serviceOnlyVariables``, as `NAME=value` strings.
    static func childEnvironment() -> [String] {
        var result: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            let name = String(text.prefix { $0 != "=" })
            if !serviceOnlyVariables.contains(name) { result.append(text) }
            entry += 1
        }
        return result
    }

    static func run(
        _ program: String, _ arguments: [String], stdin: Int32, captureStdout: Bool = false, timeout: TimeInterval
    ) throws(SpawnError) -> (Exit, Data) {
        var errPipe: [Int32] = [0, 0]
        guard pipe(&errPipe) == 0 else { throw SpawnError(code: errno) }
        defer { close(errPipe[0]) }
        // Close-on-exec so other children never hold the pipe; the spawn's dup2 clears it on fd 2.
        // (The end of the wait is waitpid, not end-of-file, so a leak in the short window before
        // this could only delay, never hang.)
        for fd in errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(errPipe[0], F_SETFL, fcntl(errPipe[0], F_GETFL) | O_NONBLOCK)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        if captureStdout {
            posix_spawn_file_actions_adddup2(&actions, errPipe[1], 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?] = childEnvironment().map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, &attributes, argv, envp)
        close(errPipe[1])
        guard spawned == 0 else { throw SpawnError(code: spawned) }

        let deadline = Date().addingTimeInterval(timeout)
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var open = true
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                kill(-pid, SIGKILL)
                waitpid(pid, nil, 0)
                return (.timedOut, output)
            }
            if open {
                var poller = pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1)
                if ready > 0 {
                    let n = read(errPipe[0], &buffer, buffer.count)
                    if n > 0 {
                        if output.count < 65_536 { output.append(contentsOf: buffer[0..<n]) }
                    } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                        open = false
                    }
                }
            } else {
                usleep(10_000)
            }
            var status: Int32 = 0
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                // Whatever the child wrote just before exiting (non-blocking: a grandchild
                // may still hold the pipe).
                while open {
                    let n = read(errPipe[0], &buffer, buffer.count)
                    if n > 0 { output.append(contentsOf: buffer[0..<n]) } else { open = false }
                }
                let signal = status & 0x7F
                return (signal == 0 ? .status((status >> 8) & 0xFF) : .signal(signal), output)
            }
        }
    }
}
