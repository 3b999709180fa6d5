import Foundation

/// A fresh directory under /tmp, removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "appliance") {
        path = NSTemporaryDirectory() + "venue-beacon-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Writes an executable shell script.
    @discardableResult
    func script(_ name: String, _ body: String) -> String {
        let p = file(name)
        _ = FileManager.default.createFile(atPath: p, contents: Data(("#!/bin/sh\n" + body + "\n").utf8), attributes: [.posixPermissions: 0o755])
        return p
    }

    func names(in sub: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: sub.isEmpty ? path : file(sub))) ?? []).sorted()
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a program to completion and returns its exit status and combined output.
@discardableResult
func runProgram(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
