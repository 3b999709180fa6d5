import CivilDate
import Foundation
import Testing

@Suite struct CivilDateTests {
    /// Unix seconds split into a date and a time of day, rounding down before 1970 too, and back.
    @Test func unixSecondsAreADateAndATimeOfDay() {
        #expect(CivilTime(unixSeconds: 0) == CivilTime(date: CivilDate(year: 1970, month: 1, day: 1), hour: 0, minute: 0, second: 0))
        #expect(CivilTime(unixSeconds: -1) == CivilTime(date: CivilDate(year: 1969, month: 12, day: 31), hour: 23, minute: 59, second: 59))
        #expect(CivilTime(unixSeconds: -86_400) == CivilTime(date: CivilDate(year: 1969, month: 12, day: 31), hour: 0, minute: 0, second: 0))
        #expect(CivilTime(unixSeconds: 1_795_342_500) == CivilTime(date: CivilDate(year: 2026, month: 11, day: 22), hour: 10, minute: 15, second: 0))
        #expect(CivilTime(unixSeconds: 253_402_300_799) == CivilTime(date: CivilDate(year: 9999, month: 12, day: 31), hour: 23, minute: 59, second: 59))
        for seconds in stride(from: -100_000_007, through: 100_000_007, by: 9_999_991) + [-86_401, -86_399, 86_399, 86_400] {
            #expect(CivilTime(unixSeconds: seconds).unixSeconds == seconds)
        }
    }

    @Test func knownDaysAreTheirDates() {
        #expect(CivilDate(daysSinceEpoch: 0) == CivilDate(year: 1970, month: 1, day: 1))
        #expect(CivilDate(daysSinceEpoch: -1) == CivilDate(year: 1969, month: 12, day: 31))
        #expect(CivilDate(year: 2000, month: 2, day: 29).daysSinceEpoch == 11_016)
        #expect(CivilDate(year: 2026, month: 11, day: 22).daysSinceEpoch == 20_779)
        #expect(CivilDate(year: 9999, month: 12, day: 31).daysSinceEpoch == 2_932_896)
    }

    /// Every day from 1600 to 9999 goes to a date and back, one day after another, each date
    /// valid and the next one after it in the calendar's order.
    @Test func everyDayRoundTripsInOrder() {
        var previous = CivilDate(daysSinceEpoch: CivilDate(year: 1600, month: 1, day: 1).daysSinceEpoch - 1)
        var failures = 0
        for days in CivilDate(year: 1600, month: 1, day: 1).daysSinceEpoch...CivilDate(year: 9999, month: 12, day: 31).daysSinceEpoch {
            let date = CivilDate(daysSinceEpoch: days)
            let next =
                previous.day < CivilDate.daysInMonth(year: previous.year, month: previous.month)
                ? CivilDate(year: previous.year, month: previous.month, day: previous.day + 1)
                : previous.month < 12 ? CivilDate(year: previous.year, month: previous.month + 1, day: 1)
                : CivilDate(year: previous.year + 1, month: 1, day: 1)
            if date != next || date.daysSinceEpoch != days || !date.isValid { failures += 1 }
            previous = date
        }
        #expect(failures == 0)
    }

    @Test func agreesWithFoundationsGregorianCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for days in stride(from: -10_000, through: 40_000, by: 997) {
            let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
            #expect(CivilDate(daysSinceEpoch: days) == CivilDate(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0))
        }
    }

    @Test func impossibleDatesAreInvalid() {
        #expect(!CivilDate(year: 2025, month: 2, day: 29).isValid)
        #expect(CivilDate(year: 2024, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 1900, month: 2, day: 29).isValid)
        #expect(!CivilDate(year: 2026, month: 13, day: 1).isValid)
        #expect(!CivilDate(year: 2026, month: 4, day: 31).isValid)
        #expect(!CivilDate(year: 2026, month: 4, day: 0).isValid)
    }
}
