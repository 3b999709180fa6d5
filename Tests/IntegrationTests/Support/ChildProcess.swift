import BLETransport
import Foundation
import Synchronization

/// A program started by a test (btvirt, a Bumble peer, the venue-beacon binary), with its stdout
/// and stderr collected together. Waits never block the cooperative pool: they poll with
/// `Task.sleep`, and the output is read on a thread of its own.
final class ChildProcess: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let command: String
    private let process: Process
    private let shared = Shared()

    private struct State {
        var output: [UInt8] = []
        var exitStatus: Int32?
        var outputClosed = false
    }

    /// Holds the state where the termination handler and the output thread can reach it.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        self.process = process
        self.command = ([executable] + arguments).joined(separator: " ")
        let shared = self.shared
        process.terminationHandler = { p in
            let status = p.terminationStatus
            shared.state.withLock { $0.exitStatus = status }
        }
        try process.run()
        let fd = pipe.fileHandleForReading.fileDescriptor
        DedicatedThread.start(name: "test-output") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                shared.state.withLock { $0.output.append(contentsOf: buffer[..<n]) }
            }
            shared.state.withLock { $0.outputClosed = true }
        }
    }

    var output: String { shared.state.withLock { String(decoding: $0.output, as: UTF8.self) } }
    var exitStatus: Int32? { shared.state.withLock { $0.exitStatus } }
    var processIdentifier: Int32 { process.processIdentifier }

    /// Waits until the output contains `text`; fails if the program exits first or time runs out.
    @discardableResult
    func waitForOutput(_ text: String, timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (output, status) = shared.state.withLock { (String(decoding: $0.output, as: UTF8.self), $0.exitStatus) }
            if output.contains(text) { return output }
            if let status {
                throw Failure(description: "\(command) exited with \(status) before printing \(text):\n\(output)")
            }
            if ContinuousClock.now >= deadline {
                throw Failure(description: "\(command) did not print \(text) within \(timeout):\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for a whole line (ended by a newline) that starts with `prefix`, and returns it
    /// without the newline: a line the program is still writing is not taken half-written.
    func waitForLine(startingWith prefix: String, timeout: Duration = .seconds(20)) async throws -> Substring {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (output, status) = shared.state.withLock { (String(decoding: $0.output, as: UTF8.self), $0.exitStatus) }
            // The last piece has no newline yet: it may be half-written.
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            if let status {
                throw Failure(description: "\(command) exited with \(status) before printing a line starting \(prefix):\n\(output)")
            }
            if ContinuousClock.now >= deadline {
                throw Failure(description: "\(command) did not print a line starting \(prefix) within \(timeout):\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the program to end and its output to be read; kills it if it takes longer than `timeout`.
    ///
    /// The exit is looked at before the clock, every turn: a test task that the cooperative pool
    /// did not run for a while (a whole-suite run on a busy machine) wakes after the deadline to a
    /// program that ended long before it, and must not report it as still running.
    func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus {
                // The pipe may stay open in a grandchild: wait for the rest of the output briefly.
                for _ in 0..<50 where !shared.state.withLock({ $0.outputClosed }) {
                    try await Task.sleep(for: .milliseconds(20))
                }
                return status
            }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        await stop()
        throw Failure(description: "\(command) still running after \(timeout); killed. Output:\n\(output)")
    }

    /// SIGTERM, then SIGKILL if it has not ended within two seconds.
    func stop() async {
        guard exitStatus == nil else { return }
        kill(process.processIdentifier, SIGTERM)
        for _ in 0..<100 {
            if exitStatus != nil { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<100 where exitStatus == nil {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
