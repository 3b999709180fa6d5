import Foundation
import Testing
@testable import Appliance

/// `venue-beacon-status.txt`: whole, rewritten only when something changed, counts only.
@Suite struct StatusFileTests {
    let card = TemporaryDirectory("status")
    var file: StatusFile { StatusFile(directory: card.path) }
    let report = DoctorReport([.ok("clock", "synchronised"), .problem("rfkill", "Bluetooth soft-blocked: hci0 (rfkill1)", fix: "sudo rfkill unblock bluetooth")])

    func read() -> String? { try? String(contentsOfFile: card.file("venue-beacon-status.txt"), encoding: .utf8) }

    /// Sets the file's modification time `seconds` before `date`.
    func age(_ seconds: Double, before date: Date) {
        let when = Date(timeIntervalSince1970: date.timeIntervalSince1970 - seconds)
        try? FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: card.file("venue-beacon-status.txt"))
    }

    @Test func theChecklistAndTheStatusLine() {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(file.write(report: report, statusLine: "advertising and scanning; 3 phones present", led: nil, writtenBy: "the status refresh", date: date) == .written)
        let text = read() ?? ""
        #expect(text.hasPrefix("venue-beacon status, written by the status refresh at 2027-01-15 08:00:00 UTC"))
        #expect(text.contains("node: advertising and scanning; 3 phones present\n"))
        #expect(!text.contains("status LED:"))
        #expect(text.contains(report.text))
        #expect(card.names() == ["venue-beacon-status.txt"])
        #expect(file.write(report: report, statusLine: "not running (failed)", led: "off (the service is not running)", writtenBy: "x", date: date, force: true) == .written)
        #expect(read()?.contains("node: not running (failed)\nstatus LED: off (the service is not running)\n") == true)
    }

    /// The card is the memory: a second process finds the file unchanged and leaves it.
    @Test func rewrittenOnlyWhenSomethingChangedOrAnHourPassed() throws {
        let now = Date()
        #expect(file.write(report: report, statusLine: "a", led: nil, writtenBy: "the start", date: now) == .written)
        age(600, before: now)
        let before = try FileManager.default.attributesOfItem(atPath: card.file("venue-beacon-status.txt"))[.modificationDate] as? Date
        // The same list and line from another writer, ten minutes later: left as it was.
        #expect(StatusFile(directory: card.path).write(report: report, statusLine: "a", led: nil, writtenBy: "the timer", date: now) == .unchanged)
        let after = try FileManager.default.attributesOfItem(atPath: card.file("venue-beacon-status.txt"))[.modificationDate] as? Date
        #expect(before != nil && before == after)
        #expect(read()?.contains("written by the start") == true)
        // Changed: written.
        #expect(file.write(report: report, statusLine: "b", led: nil, writtenBy: "the timer", date: now) == .written)
        #expect(read()?.contains("node: b\n") == true)
        // Unchanged for an hour: written again (its time says the node is still looked at).
        age(3590, before: now)
        #expect(file.write(report: report, statusLine: "b", led: nil, writtenBy: "the timer", date: now) == .unchanged)
        age(3610, before: now)
        #expect(file.write(report: report, statusLine: "b", led: nil, writtenBy: "the timer", date: now) == .written)
    }

    @Test func whenAWriteIsDue() {
        let body = "node: a\n"
        let file = "venue-beacon status, written by x at T.\nnode: a\n"
        #expect(StatusFile.isDue(body: body, existing: nil, age: nil, heartbeat: 3600))
        #expect(!StatusFile.isDue(body: body, existing: file, age: 10, heartbeat: 3600))
        #expect(StatusFile.isDue(body: "node: b\n", existing: file, age: 10, heartbeat: 3600))
        #expect(StatusFile.isDue(body: body, existing: file, age: 3600, heartbeat: 3600))
        // From the future (the clock was set back): its age says nothing.
        #expect(StatusFile.isDue(body: body, existing: file, age: -5, heartbeat: 3600))
        // Not ours (no header line), or its time unknown.
        #expect(StatusFile.isDue(body: body, existing: "node: a", age: 10, heartbeat: 3600))
        #expect(StatusFile.isDue(body: body, existing: file, age: nil, heartbeat: 3600))
    }

    @Test func aCardThatCannotBeWrittenSaysWhy() {
        let status = StatusFile(directory: card.file("missing"))
        guard case .failed = status.write(report: report, statusLine: "x", led: nil, writtenBy: "x") else {
            Issue.record("expected a failure")
            return
        }
        #expect(card.names().isEmpty)
    }

    /// The doctor as the timer runs it, on this machine: whatever it finds, every line has a
    /// mark and a finding.
    @Test func theDoctorRunsWithoutAConfig() async {
        let report = await Doctor(configPath: card.file("none.toml"), bootDirectory: card.path).run()
        #expect(report.lines.first?.check == "config")
        #expect(report.lines.first?.verdict == .problem)
        #expect(report.lines.contains { $0.check == "rfkill" })
        #expect(report.lines.contains { $0.check == "clock" })
        #expect(report.lines.allSatisfy { !$0.found.isEmpty })
        #expect(!report.passed)
    }
}

/// What systemd says of the service, as the status file's `node:` line.
@Suite struct ServiceStateTests {
    @Test func runningWithItsStatusLine() {
        let state = ServiceState.parse("""
            ActiveState=active
            SubState=running
            Result=success
            ExecMainStatus=0
            StatusText=advertising "The Card Table" and scanning; 2 phones present; a=b
            """)
        #expect(state == ServiceState(
            activeState: "active", subState: "running", result: "success", execMainStatus: 0,
            statusText: "advertising \"The Card Table\" and scanning; 2 phones present; a=b"))
        #expect(state?.statusLine == "advertising \"The Card Table\" and scanning; 2 phones present; a=b")
        #expect(state?.led == nil)
        #expect(ServiceState(activeState: "active").statusLine == "running (no status line yet)")
    }

    @Test func notRunningSaysWhy() {
        let refused = ServiceState.parse("ActiveState=failed\nSubState=failed\nResult=exit-code\nExecMainStatus=78\nStatusText=\n")
        #expect(refused?.statusLine == "not running (failed, exit-code, exit status 78: its config is not valid (sudo venue-beacon config check says why))")
        #expect(refused?.led == "off (the service is not running)")
        let stopped = ServiceState.parse("ActiveState=inactive\nSubState=dead\nResult=success\nExecMainStatus=0\nStatusText=\n")
        #expect(stopped?.statusLine == "not running (inactive)")
        #expect(ServiceState.parse("ActiveState=activating\nSubState=start-pre\n")?.statusLine == "starting")
        #expect(ServiceState.parse("ActiveState=activating\nSubState=start-pre\n")?.led == nil)
    }

    @Test func noAnswerIsNoState() {
        #expect(ServiceState.parse("") == nil)
        #expect(ServiceState.parse("SubState=running\n") == nil)
        #expect(ServiceState.parse("ActiveState=\n") == nil)
    }
}
