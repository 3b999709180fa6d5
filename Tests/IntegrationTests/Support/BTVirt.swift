import BLETransport
import Foundation
import Synchronization

/// BlueZ's controller emulator, `btvirt -s`, for one test: every client of `/tmp/bt-server-le`
/// gets its own emulated LE controller, and they all share one air.
///
/// btvirt listens on fixed paths, so only one may run on the machine: tests that use it live in
/// ``RadioTests`` (serialized), and a lock file keeps other test processes (another worktree, a CI
/// job) out while one runs. On kernels without AF_ALG it runs under the LD_PRELOAD shim
/// (`AFALGShim.c`), which this harness compiles with `cc` on first use.
struct BTVirt: Sendable {
    /// Peers started for this test (Bumble scripts), stopped with the emulator.
    private let peers = Peers()

    static let executable = "/usr/bin/btvirt"
    static let lePath = "/tmp/bt-server-le"
    static let socketPaths = ["le", "bredrle", "bredr", "amp", "mon"].map { "/tmp/bt-server-\($0)" }
    static let lockPath = "/tmp/venue-beacon-btvirt.lock"

    /// The spec for a new client controller.
    var leSpec: String { "unix:" + Self.lePath }

    /// Runs `body` with a fresh emulator, and stops it (removing its sockets) afterwards.
    static func run<T: Sendable>(_ body: (BTVirt) async throws -> T) async throws -> T {
        let shim = try await AFALGShim.path()
        let lock = try await acquireLock()
        defer { close(lock) }
        removeSockets()
        let process = try ChildProcess(executable, ["-s"], environment: ["LD_PRELOAD": shim])
        do {
            try await waitForServer(process)
            let btvirt = BTVirt()
            do {
                let result = try await body(btvirt)
                await btvirt.peers.stopAll()
                await process.stop()
                removeSockets()
                return result
            } catch {
                await btvirt.peers.stopAll()
                throw error
            }
        } catch {
            await process.stop()
            removeSockets()
            throw error
        }
    }

    /// Starts a Bumble peer script on this emulator (`script TRANSPORT arguments…`); it is stopped
    /// when the test's emulator stops.
    func bumble(_ script: String, _ arguments: [String] = []) throws -> ChildProcess {
        let peer = try Bumble.start(script, transport: leSpec, arguments)
        peers.add(peer)
        return peer
    }

    private final class Peers: Sendable {
        private let list = Mutex<[ChildProcess]>([])
        func add(_ p: ChildProcess) { list.withLock { $0.append(p) } }
        func stopAll() async {
            for p in list.withLock({ l in defer { l = [] }; return l }) { await p.stop() }
        }
    }

    private static func removeSockets() {
        for path in socketPaths { unlink(path) }
    }

    private static func waitForServer(_ process: ChildProcess) async throws {
        for _ in 0..<250 {
            if access(lePath, F_OK) == 0 { return }
            if let status = process.exitStatus {
                throw ChildProcess.Failure(description: "btvirt exited with \(status):\n\(process.output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ChildProcess.Failure(description: "btvirt did not create \(lePath) within 5 s:\n\(process.output)")
    }

    /// An exclusive flock on a file under /tmp, waited for on a thread of its own.
    private static func acquireLock() async throws -> Int32 {
        try await DedicatedThread.run(name: "btvirt-lock") { () throws(ChildProcess.Failure) -> Int32 in
            let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
            guard fd >= 0 else { throw ChildProcess.Failure(description: "cannot open \(lockPath): errno \(errno)") }
            while flock(fd, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    close(fd)
                    throw ChildProcess.Failure(description: "cannot lock \(lockPath): errno \(errno)")
                }
            }
            return fd
        }
    }
}

/// The LD_PRELOAD library that lets btvirt serve LE clients on kernels without AF_ALG.
enum AFALGShim {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("AFALGShim.c").path

    /// Compiles the shim (once per version of its source: the file name carries a hash of it) and
    /// returns the library's path. Compiles to a private name and renames, so concurrent test
    /// processes never load a half-written library.
    static func path() async throws -> String {
        let code = try Data(contentsOf: URL(fileURLWithPath: source))
        let hash = code.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        let output = NSTemporaryDirectory() + "venue-beacon-afalg-shim-\(String(hash, radix: 16)).so"
        if access(output, R_OK) == 0 { return output }
        let partial = output + ".\(getpid())"
        let cc = try ChildProcess(compiler, ["-shared", "-fPIC", "-O1", "-o", partial, source, "-ldl"])
        let status = try await cc.waitForExit(timeout: .seconds(60))
        guard status == 0, rename(partial, output) == 0 else {
            unlink(partial)
            throw ChildProcess.Failure(description: "\(cc.command) failed (\(status)):\n\(cc.output)")
        }
        return output
    }

    /// `cc` from PATH, else the toolchain's `clang`.
    static var compiler: String {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        for name in ["cc", "clang", "gcc"] {
            for dir in dirs where access("\(dir)/\(name)", X_OK) == 0 { return "\(dir)/\(name)" }
        }
        return "/usr/bin/cc"
    }
}
