import Foundation
import Testing
@testable import Appliance

/// `venue-beacon-status.txt`: whole, rate-limited, counts only.
@Suite struct StatusFileTests {
    let card = TemporaryDirectory("status")
    var file: StatusFile { StatusFile(doctor: Doctor(configPath: card.file("none.toml"), bootDirectory: card.path, inService: true)) }
    let report = DoctorReport([.ok("clock", "synchronised"), .problem("rfkill", "Bluetooth soft-blocked: hci0 (rfkill1)", fix: "sudo rfkill unblock bluetooth")])

    func read() -> String? { try? String(contentsOfFile: card.file("venue-beacon-status.txt"), encoding: .utf8) }

    @Test func theChecklistAndTheStatusLine() {
        let status = file
        let start = ContinuousClock.now
        #expect(status.write(report: report, statusLine: "advertising and scanning; 3 phones present", led: StatusFile.describe(.running),
            date: Date(timeIntervalSince1970: 1_800_000_000), now: start) == .written)
        let text = read() ?? ""
        #expect(text.hasPrefix("venue-beacon status, written by the running service at 2027-01-15 08:00:00 UTC"))
        #expect(text.contains("node: advertising and scanning; 3 phones present\n"))
        #expect(text.contains("status LED: steady on (advertising and scanning)\n"))
        #expect(text.contains(report.text))
        #expect(card.names() == ["venue-beacon-status.txt"])
    }

    @Test func rateLimitedAndOnlyWhenSomethingChanged() {
        let status = file
        let start = ContinuousClock.now
        #expect(status.write(report: report, statusLine: "a", led: nil, now: start) == .written)
        #expect(!status.isDue(now: start + .seconds(299)))
        // Changed, but too soon.
        #expect(status.write(report: report, statusLine: "b", led: nil, now: start + .seconds(299)) == nil)
        #expect(read()?.contains("node: a\n") == true)
        #expect(status.isDue(now: start + .seconds(300)))
        // Due, but unchanged: not rewritten, and the next check waits its interval again.
        #expect(status.write(report: report, statusLine: "a", led: nil, now: start + .seconds(300)) == nil)
        #expect(!status.isDue(now: start + .seconds(301)))
        #expect(status.write(report: report, statusLine: "b", led: nil, now: start + .seconds(301)) == nil)
        #expect(status.write(report: report, statusLine: "b", led: nil, now: start + .seconds(600)) == .written)
        #expect(read()?.contains("node: b\n") == true)
        // Unchanged for an hour: written again (its time says the node still runs).
        #expect(status.write(report: report, statusLine: "b", led: nil, now: start + .seconds(900)) == nil)
        #expect(status.write(report: report, statusLine: "b", led: nil, now: start + .seconds(600 + 3600)) == .written)
    }

    @Test func aCardThatCannotBeWrittenIsSaidOnce() {
        let status = StatusFile(doctor: Doctor(configPath: "/nonexistent.toml", bootDirectory: card.file("missing"), inService: true))
        let start = ContinuousClock.now
        guard case .failed? = status.write(report: report, statusLine: nil, led: nil, now: start) else {
            Issue.record("expected a failure")
            return
        }
        #expect(status.write(report: report, statusLine: "x", led: nil, now: start + .seconds(600)) == nil)
    }

    /// The doctor as the service runs it, on this machine: whatever it finds, every line has a
    /// mark and a finding, and nothing personal can be in it (no diary is read in the service).
    @Test func theDoctorRunsWithoutAConfig() async {
        let report = await Doctor(configPath: card.file("none.toml"), bootDirectory: card.path, inService: true).run()
        #expect(report.lines.first?.check == "config")
        #expect(report.lines.first?.verdict == .problem)
        #expect(report.lines.contains { $0.check == "rfkill" })
        #expect(report.lines.contains { $0.check == "clock" })
        #expect(report.lines.allSatisfy { !$0.found.isEmpty })
        #expect(!report.passed)
    }
}
