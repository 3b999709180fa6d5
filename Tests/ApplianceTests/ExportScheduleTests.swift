import Foundation
import Glibc
import Testing
@testable import Appliance

/// `[export] schedule` on a manual clock: due at its time, a time missed while off runs once
/// at the next start, never twice, also across restarts.
@Suite struct ExportScheduleTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    func at(_ iso: String) -> Date { ISO8601DateFormatter().date(from: iso)! }

    func schedule(_ text: String, _ zone: TimeZone = utc) throws -> ExportSchedule {
        try #require(try ExportSchedule.parse(text, timeZone: zone).get())
    }

    @Test func parsesDailyWeekdayListsAndRanges() throws {
        #expect(try schedule("daily 03:30").days == [Bool](repeating: true, count: 7))
        #expect(try schedule("daily 03:30").minute == 210)
        #expect(try schedule("monday-friday 03:30").days == [true, true, true, true, true, false, false])
        #expect(try schedule("mon,wed, fri 06:00").days == [true, false, true, false, true, false, false])
        #expect(try schedule("fri-mon 06:00").days == [true, false, false, false, true, true, true])
        #expect(try schedule("Sunday 23:59").description == "sunday 23:59")
        #expect(try ExportSchedule.parse("off").get() == nil)
        for bad in ["daily", "03:30", "daily 24:00", "daily 3:3x", "someday 03:30", "mon-fri-sat 03:30", "mon,,tue 03:00"] {
            #expect((try? ExportSchedule.parse(bad).get()) == nil, "\(bad)")
        }
    }

    @Test func dueAtItsTimeOnceAndNotBefore() throws {
        let s = try schedule("daily 03:30")
        let start = at("2026-11-24T12:00:00Z")
        #expect(s.due(now: at("2026-11-25T03:29:59Z"), lastDone: start) == nil)
        let slot = at("2026-11-25T03:30:00Z")
        #expect(s.due(now: slot, lastDone: start) == slot)
        #expect(s.due(now: at("2026-11-25T03:30:10Z"), lastDone: slot) == nil)  // not twice
        #expect(s.next(after: slot) == at("2026-11-26T03:30:00Z"))
    }

    @Test func missedTimesWhileOffRunOnceForTheLatest() throws {
        let s = try schedule("daily 03:30")
        let lastDone = at("2026-11-20T03:30:00Z")
        // Off for four days: one export, for the latest time.
        let now = at("2026-11-24T09:00:00Z")
        #expect(s.due(now: now, lastDone: lastDone) == at("2026-11-24T03:30:00Z"))
        #expect(s.due(now: now, lastDone: at("2026-11-24T03:30:00Z")) == nil)
    }

    @Test func weekdaysOnlyAndLocalTime() throws {
        let s = try schedule("monday-friday 03:30", Self.berlin)
        // Saturday 2026-11-28: nothing new after Friday's.
        let friday = at("2026-11-27T02:30:00Z")  // 03:30 CET
        #expect(s.latest(atOrBefore: at("2026-11-28T12:00:00Z")) == friday)
        #expect(s.next(after: friday) == at("2026-11-30T02:30:00Z"))  // Monday
    }

    @Test func theStateSurvivesRestartsSoNothingRunsTwice() throws {
        let dir = TemporaryDirectory("export-schedule")
        let path = dir.file("scheduled-export.state")
        let s = try schedule("daily 03:30")
        // First start ever: recorded, nothing exported for times before it.
        var scheduled = ScheduledExport(schedule: s, statePath: path)
        #expect(scheduled.due(now: at("2026-11-24T12:00:00Z")) == nil)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let slot = at("2026-11-25T03:30:00Z")
        #expect(scheduled.due(now: slot) == slot)
        try scheduled.done(slot)
        // A restart right after: not again.
        scheduled = ScheduledExport(schedule: s, statePath: path)
        #expect(scheduled.due(now: at("2026-11-25T03:31:00Z")) == nil)
        // Off from the 25th until the 27th at noon: the 27th's time runs once at the start.
        scheduled = ScheduledExport(schedule: s, statePath: path)
        let missed = at("2026-11-27T03:30:00Z")
        #expect(scheduled.due(now: at("2026-11-27T12:00:00Z")) == missed)
        try scheduled.done(missed)
        scheduled = ScheduledExport(schedule: s, statePath: path)
        #expect(scheduled.due(now: at("2026-11-27T12:00:10Z")) == nil)
    }
}
