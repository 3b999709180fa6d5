import Foundation
import VenueNode
import Testing
@testable import Appliance

@Suite struct ScheduleTests {
    static let london = TimeZone(identifier: "Europe/London")!

    /// An instant from an ISO-8601 string with an offset or Z.
    func at(_ text: String) -> Date {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.date(from: text)!
    }

    func schedule(_ days: [String], zone: TimeZone = london) throws -> Schedule {
        let parsed = try days.map { try ScheduleSettings.parseDay($0).get() }
        return Schedule(days: parsed, timeZone: zone)
    }

    /// Monday to Sunday.
    static let pub = [
        "09:00-23:00", "09:00-23:00", "closed", "09:00-23:00", "09:00-14:00, 17:00-02:00", "12:00-02:00", "open",
    ]

    @Test func parsesDayValues() throws {
        #expect(try ScheduleSettings.parseDay("closed").get() == [])
        #expect(try ScheduleSettings.parseDay("open").get() == [OpeningRange(start: 0, end: 1440)])
        #expect(try ScheduleSettings.parseDay(" 09:00-14:00 , 18:30-24:00").get() == [
            OpeningRange(start: 540, end: 840), OpeningRange(start: 1110, end: 1440),
        ])
        #expect(try ScheduleSettings.parseDay("22:00-02:00").get() == [OpeningRange(start: 1320, end: 120)])
        for bad in ["", "9:00-23:00", "09:00", "09:00-25:00", "24:00-02:00", "09:60-10:00", "09:00-09:00", "09:00-12:00,", "always", "０９:00-10:00"] {
            #expect(throws: ScheduleSettings.Problem.self, "\(bad)") { try ScheduleSettings.parseDay(bad).get() }
        }
    }

    @Test func openAndClosedOnAnOrdinaryWeek() throws {
        let s = try schedule(Self.pub)
        // 2026-01-05 is a Monday (GMT in London).
        #expect(!s.isOpen(at: at("2026-01-05T08:59:59Z")))
        #expect(s.isOpen(at: at("2026-01-05T09:00:00Z")))
        #expect(s.isOpen(at: at("2026-01-05T22:59:59Z")))
        #expect(!s.isOpen(at: at("2026-01-05T23:00:00Z")))
        #expect(!s.isOpen(at: at("2026-01-07T12:00:00Z")))  // Wednesday closed
        // Friday's late range runs into Saturday 02:00, then Saturday opens at 12:00.
        #expect(s.isOpen(at: at("2026-01-10T01:59:00Z")))
        #expect(!s.isOpen(at: at("2026-01-10T02:00:00Z")))
        #expect(!s.isOpen(at: at("2026-01-09T15:00:00Z")))  // Friday afternoon gap
        // Saturday's range runs into Sunday, which is open all day anyway, and Sunday ends at midnight.
        #expect(s.isOpen(at: at("2026-01-11T23:59:59Z")))
        #expect(s.isOpen(at: at("2026-01-12T09:00:00Z")))
        #expect(!s.isOpen(at: at("2026-01-12T00:00:00Z")))  // Monday 00:00: Sunday's "open" has ended
    }

    @Test func nextChangeWalksTheWeek() throws {
        let s = try schedule(Self.pub)
        var t = at("2026-01-05T12:00:00Z")  // Monday noon, open
        var changes: [Date] = []
        for _ in 0..<9 {
            guard let next = s.nextChange(after: t) else { break }
            changes.append(next)
            t = next
        }
        #expect(changes == [
            "2026-01-05T23:00:00Z", "2026-01-06T09:00:00Z", "2026-01-06T23:00:00Z",  // Mon close, Tue
            "2026-01-08T09:00:00Z", "2026-01-08T23:00:00Z",  // Wednesday closed, Thursday
            "2026-01-09T09:00:00Z", "2026-01-09T14:00:00Z", "2026-01-09T17:00:00Z",  // Friday
            "2026-01-10T02:00:00Z",  // past midnight
        ].map(at))
        // Saturday 12:00 opens, and it stays open through Sunday until Monday 00:00.
        #expect(s.nextChange(after: at("2026-01-10T03:00:00Z")) == at("2026-01-10T12:00:00Z"))
        #expect(s.nextChange(after: at("2026-01-10T12:00:00Z")) == at("2026-01-12T00:00:00Z"))
    }

    @Test func aroundTheClockAndNeverOpenHaveNoChange() throws {
        let open = try schedule(Array(repeating: "open", count: 7))
        #expect(open.isOpen(at: at("2026-03-29T01:30:00Z")))
        #expect(open.nextChange(after: at("2026-03-28T00:00:00Z")) == nil)
        let closed = try schedule(Array(repeating: "closed", count: 7))
        #expect(closed.nextChange(after: at("2026-03-28T00:00:00Z")) == nil)
    }

    @Test func springForwardOpensWhenTheClockJumpsPastTheStart() throws {
        // London, Sunday 2026-03-29: 01:00 GMT becomes 02:00 BST; local 01:00-02:00 never happens.
        var days = Array(repeating: "closed", count: 7)
        days[6] = "01:30-03:00"
        let s = try schedule(days)
        #expect(!s.isOpen(at: at("2026-03-29T00:59:59Z")))
        #expect(s.isOpen(at: at("2026-03-29T01:00:00Z")))  // 02:00 BST, inside 01:30-03:00
        #expect(s.nextChange(after: at("2026-03-28T12:00:00Z")) == at("2026-03-29T01:00:00Z"))
        #expect(s.nextChange(after: at("2026-03-29T01:00:00Z")) == at("2026-03-29T02:00:00Z"))  // 03:00 BST

        // A range entirely inside the skipped hour never opens that day.
        days[6] = "01:10-01:50"
        let skipped = try schedule(days)
        let next = skipped.nextChange(after: at("2026-03-28T12:00:00Z"))
        #expect(next == at("2026-04-05T00:10:00Z"))  // the following Sunday, 01:10 BST
    }

    @Test func fallBackRepeatsTheHour() throws {
        // London, Sunday 2026-10-25: 02:00 BST becomes 01:00 GMT; local 01:00-02:00 happens twice.
        var days = Array(repeating: "closed", count: 7)
        days[6] = "01:15-01:45"
        let s = try schedule(days)
        var t = at("2026-10-24T20:00:00Z")
        var changes: [Date] = []
        for _ in 0..<4 {
            guard let next = s.nextChange(after: t) else { break }
            changes.append(next)
            t = next
        }
        #expect(changes == ["2026-10-25T00:15:00Z", "2026-10-25T00:45:00Z", "2026-10-25T01:15:00Z", "2026-10-25T01:45:00Z"].map(at))
        #expect(!s.isOpen(at: at("2026-10-25T01:00:00Z")))  // 01:00 GMT, the second 01:00
    }

    @Test func pastMidnightRangeAcrossTheWeekEnd() throws {
        var days = Array(repeating: "closed", count: 7)
        days[6] = "20:00-03:00"  // Sunday night into Monday
        let s = try schedule(days, zone: TimeZone(identifier: "America/New_York")!)
        #expect(s.isOpen(at: at("2026-01-12T02:59:00-05:00")))  // Monday early morning
        #expect(!s.isOpen(at: at("2026-01-12T03:00:00-05:00")))
        #expect(s.nextChange(after: at("2026-01-12T01:00:00-05:00")) == at("2026-01-12T03:00:00-05:00"))
    }

    @Test func configSectionIsOptionalButCompleteWhenPresent() throws {
        let minimal = SettingsTests.minimal
        #expect(try Settings.parse(minimal, file: "t").schedule == nil)

        let full = try Settings.parse(minimal + "\n[export]\nfrom = \"venue@example.org\"\n[schedule]\n" + zip(Schedule.weekdays, Self.pub).map { "\($0) = \"\($1)\"" }.joined(separator: "\n"), file: "t")
        #expect(full.schedule?.days[4] == [OpeningRange(start: 540, end: 840), OpeningRange(start: 1020, end: 120)])
        #expect(try Settings.parse(full.effectiveTOML, file: "again") == full)

        do {
            _ = try Settings.parse(minimal + "\n[schedule]\nmonday = \"9-5\"\nfunday = \"open\"\n" + ["tuesday", "wednesday", "thursday", "friday", "saturday"].map { "\($0) = \"closed\"" }.joined(separator: "\n"), file: "t")
            Issue.record("expected problems")
        } catch {
            #expect(error.problems.map(\.key) == ["schedule.monday", "schedule.sunday", "schedule.funday"])
            #expect(error.problems[0].value == "\"9-5\"")
            #expect(error.problems[0].problem.contains("\"09:00-23:00\""))
            #expect(error.problems[1].problem.hasPrefix("is required"))
        }
    }
}
