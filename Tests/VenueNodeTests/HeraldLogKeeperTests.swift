import BLEHost
import Foundation
import Herald
import Testing
import VenueDiary
@testable import VenueNode

/// The diary loop owns the Herald logs for `run` and `simulate`: logs that cannot be written cost
/// one log line per run of failures (not one every 10 s flush), their rows are dropped and counted
/// in the keeper's counters, and the line when they are written again says how many were lost.
@Suite struct HeraldLogKeeperTests {
    @Test func unwritableHeraldLogsAreSaidOnceCountedAndSaidAgainWhenWritten() throws {
        let dir = try ReplayDirectory()
        let logs = dir.path("herald")
        // A directory where contacts.csv goes: every append fails (EISDIR).
        try FileManager.default.createDirectory(atPath: logs + "/contacts.csv", withIntermediateDirectories: true)
        let t0 = Replayed.t0
        var notices: [DiaryKeeper.Notice] = []
        var keeper = try DiaryKeeper(
            store: DiaryStore(path: dir.path("diary.sqlite")), path: "diary.sqlite", settings: Replayed.settings(),
            heraldLogs: HeraldLogWriter(directory: logs, deviceName: "pi", softwareVersion: "1", ownPayload: []),
            steady: 0, wall: t0, synchronised: true, boot: .init(bootID: "b", wallMinusBoot: t0), notices: &notices)
        let target = Target(id: TargetID(rawValue: 3), address: BluetoothAddress("4C:11:22:33:44:55")!, addressType: .random)
        func run(_ seconds: ClosedRange<Int>) throws {
            for second in seconds {
                keeper.record([.measure(target, rssi: -70, payload: nil, time: Double(second))], steady: Double(second), wall: t0 + Double(second))
                try keeper.tick(steady: Double(second) + 0.5, wall: t0 + Double(second) + 0.5, synchronisation: { nil }, into: &notices)
            }
        }
        func heraldLines() -> [LogLine] {
            defer { notices.removeAll() }
            return notices.compactMap { notice in
                guard case .log(let line) = notice, line.text.hasPrefix("Herald logs") else { return nil }
                return line
            }
        }

        // Flushes at 11.5, 21.5, …, 51.5 s: 11 rows, then 10 each, all dropped; one line.
        try run(1...60)
        #expect(heraldLines() == [
            LogLine(.error, "Herald logs: 11 rows dropped: cannot write \(logs)/contacts.csv: Is a directory (later rows that cannot be written are dropped and counted too)")
        ])
        #expect(keeper.counters.logWriteErrors == 5)
        #expect(keeper.counters.logRowsDropped == 51)
        #expect(keeper.heraldLogs?.pendingRows == 9)

        try FileManager.default.removeItem(atPath: logs + "/contacts.csv")
        try run(61...61)
        #expect(heraldLines() == [LogLine(.notice, "Herald logs: written again; 51 rows were dropped while writes failed")])
        #expect(keeper.counters.logWriteErrors == 5)
        #expect(keeper.counters.logRowsDropped == 51)
        let contacts = try String(contentsOfFile: logs + "/contacts.csv", encoding: .utf8)
        #expect(contacts.split(separator: "\n").count == 1 + 10)  // the header and 52…61 s
    }
}
