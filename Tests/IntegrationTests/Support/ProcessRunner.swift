import Foundation

/// Runs real programs from tests: the built `venue-beacon` binary, btvirt, Bumble scripts, msmtp.
/// Shared by every integration test; add to it rather than writing a second runner.
enum ProcessRunner {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
        var output: String { stdout + stderr }
    }

    /// The directory of the build products (`.build/debug`), where the test binary itself lives.
    static var productsDirectory: URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return exe.deletingLastPathComponent()
    }

    /// The built `venue-beacon` executable (`swift build --build-tests` builds it beside the tests).
    static var venueBeacon: URL { productsDirectory.appendingPathComponent("venue-beacon") }

    /// The repository root.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs a program to completion with an optional stdin and a time limit; kills it on timeout.
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil,
        currentDirectory: URL? = nil, timeout: Duration = .seconds(120)
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let outURL = FileManager.default.temporaryDirectory.appendingPathComponent("out-\(UUID().uuidString)")
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try? input.fileHandleForWriting.close()
        }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(5_000)
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// Runs the built `venue-beacon` with arguments.
    static func venueBeacon(_ arguments: [String], environment: [String: String]? = nil, stdin: Data? = nil) throws -> Result {
        try run(venueBeacon, arguments, environment: environment, stdin: stdin)
    }
}

/// A fresh temporary directory, removed when the value is dropped by `remove()`.
struct TemporaryDirectory {
    let url: URL

    init(_ label: String = "venue-beacon-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws -> String {
        let p = path(name)
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
