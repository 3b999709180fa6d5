import Foundation
import Glibc

/// One `venue-beacon run` child: its config in a data directory, its log, its memory.
struct NodeProcess {
    let process: Process
    let spawned: ContinuousClock.Instant
    let log: String

    /// Writes the config (the default venue, the diary in `directory`, the controller at
    /// `device`) and starts `binary run` with `$NOTIFY_SOCKET` set and the `Environment=` lines of
    /// the systemd unit (as the service runs).
    /// `replicateTo`: a broker URL; the node then replicates to the venue hub there as node
    /// `hall` (login `hall`, no password: a benchmark broker that allows it).
    static func start(
        binary: String, directory: String, device: String, notifySocket: String, unitEnvironment: [String: String],
        replicateTo: String? = nil
    ) throws -> NodeProcess {
        let config = directory + "/venue-beacon.toml"
        var text = """
            [venue]
            country = 826
            state = 4
            code = 123123
            name = "Erin's Stakehouse"

            [diary]
            path = "\(directory)/diary.sqlite"
            recording_days = "forever"

            [export]
            outbox = "\(directory)/outbox"

            [bluetooth]
            device = "unix:\(device)"

            """
        if let replicateTo {
            text += """
                [replication]
                broker = "\(replicateTo)"
                node = "hall"

                """
        }
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        let log = directory + "/run.log"
        guard FileManager.default.createFile(atPath: log, contents: nil) else { throw BenchError("cannot create \(log)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["run", "--config", config]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notifySocket
        environment.removeValue(forKey: "VENUE_BEACON_CONFIG")
        environment.merge(unitEnvironment) { _, unit in unit }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        let spawned = ContinuousClock.now
        try process.run()
        return NodeProcess(process: process, spawned: spawned, log: log)
    }

    /// SIGTERM, then waits for the diary to be closed and the process to exit.
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// `/proc/PID/status` memory lines, in kB.
    func memory() -> Memory? {
        guard let text = readProcFile("/proc/\(process.processIdentifier)/status") else { return nil }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kB = Int(parts[1]) { values[String(parts[0])] = kB }
        }
        guard let rss = values["VmRSS"], let hwm = values["VmHWM"] else { return nil }
        return Memory(rss: rss, hwm: hwm, anon: values["RssAnon"] ?? 0, file: values["RssFile"] ?? 0, threads: values["Threads"] ?? 0)
    }

    /// `/proc/PID/smaps_rollup` (kB): how much of resident memory is clean file pages (the kernel
    /// can drop and re-read them) and how much is dirty (the process's own).
    func rollup() -> [(String, Int)] {
        guard let text = readProcFile("/proc/\(process.processIdentifier)/smaps_rollup") else { return [] }
        let wanted = ["Rss", "Pss", "Shared_Clean", "Private_Clean", "Private_Dirty", "Anonymous"]
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " })
            guard parts.count >= 2, wanted.contains(String(parts[0])), let kB = Int(parts[1]) else { return nil }
            return (String(parts[0]), kB)
        }
    }

    /// Resident kB by mapping (`/proc/PID/smaps`): file-backed mappings by file name, anonymous
    /// ones as `[anon]` (malloc arenas, thread stacks), largest first.
    func residentByMapping() -> [(String, Int)] {
        guard let text = readProcFile("/proc/\(process.processIdentifier)/smaps") else { return [] }
        var totals: [String: Int] = [:]
        var name = "[anon]"
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), first.first?.isHexDigit == true, fields.count >= 5 {
                name = fields.count >= 6 ? String(fields[5].split(separator: "/").last ?? fields[5]) : "[anon]"
            } else if first == "Rss:", fields.count >= 2, let kB = Int(fields[1]) {
                totals[name, default: 0] += kB
            }
        }
        return totals.sorted { $0.value > $1.value }
    }
}

struct Memory: Sendable {
    /// kB: resident now, its peak, and the anonymous and file-backed parts of resident now.
    var rss: Int
    var hwm: Int
    var anon: Int
    var file: Int
    var threads: Int
}

/// The whole of a /proc file (they report size 0, so read until end of file).
func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { break }
        bytes += chunk[..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// `NAME=value` pairs of a systemd unit's `Environment=` lines (unquoted values only, which is
/// all ours uses).
func unitEnvironment(_ path: String) -> [String: String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
    var result: [String: String] = [:]
    for line in text.split(separator: "\n") where line.hasPrefix("Environment=") {
        for pair in line.dropFirst("Environment=".count).split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { result[String(parts[0])] = String(parts[1]) }
        }
    }
    return result
}

