import BLEHost
import Foundation

/// `venue-beacon run` started by a test on the emulator, with its own config, diary and log.
struct RunningNode: Sendable {
    let process: ChildProcess
    let directory: TemporaryDirectory
    let config: String

    /// The venue of the issue's worked example.
    static let venue = """
        [venue]
        country = 826
        state = 4
        code = 123123
        name = "Erin's Stakehouse"
        """
    static let workedExample = "303a030400f3e001001011" + Hex.encode(Array("Erin's Stakehouse".utf8))

    /// Starts the node on `device` (default: the emulator) with short check-in and check-out
    /// limits, check-ins committed at once unless `commitSeconds` says otherwise, and waits until
    /// its log shows `waitFor` (by default: it advertises and scans).
    static func start(
        device: String = "unix:/tmp/bt-server-le", checkIn: Int = 2, checkOut: Int = 4, commitSeconds: Int = 0, extra: String = "",
        bluetoothExtra: String = "", environment: [String: String] = [:], waitFor: String = "Bluetooth: advertising \"Erin's Stakehouse\" and scanning"
    ) async throws -> RunningNode {
        let directory = try TemporaryDirectory("venue-node")
        let config = try directory.write("venue-beacon.toml", """
            \(venue)
            [diary]
            path = "\(directory.path("diary.sqlite"))"
            check_in_seconds = \(checkIn)
            check_out_seconds = \(checkOut)
            commit_seconds = \(commitSeconds)
            [bluetooth]
            device = "\(device)"
            \(bluetoothExtra)
            [logging]
            level = "info"
            \(extra)
            """)
        let process = try ChildProcess(ProcessRunner.venueBeacon.path, ["run", "--config", config], environment: environment)
        let node = RunningNode(process: process, directory: directory, config: config)
        try await node.process.waitForOutput(waitFor)
        return node
    }

    /// The share window (every visit) as `venue-beacon export --format json` prints it.
    func export() throws -> [ExportedVisit] {
        let result = try ProcessRunner.venueBeacon(["export", "--config", config, "--format", "json", "--days", "all"])
        guard result.status == 0 else {
            throw ChildProcess.Failure(description: "export failed (\(result.status)): \(result.stderr)")
        }
        return try JSONDecoder().decode(ExportedDocument.self, from: Data(result.stdout.utf8)).visits
    }

    /// Polls the export until `done` holds for its visits.
    @discardableResult
    func waitForVisits(
        _ what: String, timeout: Duration = .seconds(30), _ done: ([ExportedVisit]) -> Bool
    ) async throws -> [ExportedVisit] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let visits = try export()
            if done(visits) { return visits }
            guard ContinuousClock.now < deadline else {
                throw ChildProcess.Failure(description: "no \(what) within \(timeout); visits: \(visits)\nlog:\n\(process.output)")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// SIGTERM; returns the exit status and how long the node took to exit.
    func terminate() async throws -> (status: Int32, seconds: Double) {
        let start = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        let status = try await process.waitForExit(timeout: .seconds(10))
        let elapsed = ContinuousClock.now - start
        return (status, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }

    func remove() { directory.remove() }
}

struct ExportedDocument: Decodable {
    var visits: [ExportedVisit]
}

/// One visit of a JSON export.
struct ExportedVisit: Decodable, CustomStringConvertible {
    var kind: String
    var payload: String
    var checkIn: String
    var checkOut: String?
    var samples: Int
    var rssiMax: Int?

    enum CodingKeys: String, CodingKey {
        case kind, payload, samples
        case checkIn = "check_in"
        case checkOut = "check_out"
        case rssiMax = "rssi_max"
    }

    var checkOutTime: Date? { checkOut.flatMap { ISO8601DateFormatter().date(from: $0) } }
    var checkInTime: Date? { ISO8601DateFormatter().date(from: checkIn) }

    var description: String { "\(kind):\(payload.prefix(16))… \(checkIn)–\(checkOut ?? "open") samples \(samples)" }
}

/// Herald's 129-byte test payload with an identifier (0x00, 0x0000, Int32 LE, zeros).
func testPayload(_ id: UInt8) -> [UInt8] {
    [0, 0, 0, id] + [UInt8](repeating: 0, count: 125)
}
