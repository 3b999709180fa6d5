import Foundation
import Testing
import VenueNode

@testable import Simulation

/// The days of a multi-day venue, and the venue they hold: opening hours, visitors within them,
/// regulars coming back.
@Suite struct DayScheduleTests {
    static let day = DaySchedule.secondsPerDay

    @Test func withoutAScheduleEveryDayIsOpenFromNineToFive() {
        let days = DaySchedule(schedule: nil, days: 3)
        #expect(days.days.count == 3)
        for (i, day) in days.days.enumerated() {
            #expect(day.start == Double(i) * Self.day)
            #expect(day.openings == [VenueDay.Opening(open: day.start + 9 * 3600, close: day.start + 17 * 3600)])
        }
        // Virtual 0 is midnight of Monday 2026-06-01, UTC.
        #expect(days.origin == 1_780_272_000)
        #expect(Schedule.weekday(ofDay: Int(days.origin / Self.day)) == 0)
        #expect(days.schedule.timeZone.secondsFromGMT(for: Date()) == 0)
    }

    @Test func aConfiguredWeekKeepsItsClosedDaysAndItsNightsPastMidnight() {
        var week = Array(repeating: [OpeningRange(start: 10 * 60, end: 22 * 60)], count: 7)
        week[4] = [OpeningRange(start: 9 * 60, end: 14 * 60), OpeningRange(start: 18 * 60, end: 2 * 60)]  // Friday
        week[6] = []  // Sunday closed
        let config = Schedule(days: week, timeZone: TimeZone(identifier: "Europe/Berlin")!)
        let days = DaySchedule(schedule: config, days: 8)
        // The node keeps the same weekdays, in UTC.
        #expect(days.schedule.days == week)
        #expect(days.schedule.timeZone.secondsFromGMT(for: Date()) == 0)
        let friday = days.days[4]
        #expect(friday.openings == [
            VenueDay.Opening(open: friday.start + 9 * 3600, close: friday.start + 14 * 3600),
            VenueDay.Opening(open: friday.start + 18 * 3600, close: friday.start + 26 * 3600),
        ])
        #expect(days.days[6].openings.isEmpty)
        #expect(days.days[7].openings == [VenueDay.Opening(open: 7 * Self.day + 10 * 3600, close: 7 * Self.day + 22 * 3600)])
        // What the node's loop will decide matches the days, every quarter of an hour.
        for quarter in 0..<(8 * 96) {
            let t = Double(quarter) * 900
            #expect(days.schedule.isOpen(at: Date(timeIntervalSince1970: days.origin + t)) == days.isOpen(at: t), "at \(t)")
        }
    }

    static let venue = VenueConfiguration(visitors: 40, seed: 9)
    static let month = MultiDayVenue.generate(days: DaySchedule(schedule: nil, days: 10), venue: venue)

    @Test func everyoneComesAndGoesWithinTheDaysOpeningHours() {
        let truth = Self.month
        for device in truth.truth.devices {
            for segment in device.presence {
                let day = truth.days.days[truth.days.dayIndex(at: segment.start)]
                #expect(day.openings.contains { segment.start >= $0.open && segment.end <= $0.close }, "device \(device.id)")
            }
            #expect(zip(device.presence, device.presence.dropFirst()).allSatisfy { $0.end < $1.start })
        }
        #expect(truth.visitorsByDay == Array(repeating: 40, count: 10))
    }

    @Test func regularsComeBackOnLaterDaysWithTheSamePhone() throws {
        let truth = Self.month
        #expect(truth.regularsByDay[0] == 0)
        #expect(truth.regularsByDay.dropFirst().allSatisfy { $0 > 0 })
        // About 30 % of each later day's visitors.
        let share = Double(truth.regularsByDay.dropFirst().reduce(0, +)) / Double(9 * 40)
        #expect(share > 0.2 && share < 0.4)
        let returning = truth.truth.people.filter { person in
            Set(person.presence.map { truth.days.dayIndex(at: $0.start) }).count > 1
        }
        #expect(returning.count > 0)
        // A regular's phone is one device: its payload recorded on every day they came.
        let phone = truth.truth.devices[try #require(returning.first).devices[0]]
        let days = Set(truth.truth.visits.filter { $0.device == phone.id }.map { truth.days.dayIndex(at: $0.arrive) })
        #expect(days.count > 1)
        // Herald payloads name one person each over the whole run.
        let herald = truth.truth.devices.filter { $0.payload != nil }
        #expect(Set(herald.compactMap(\.payload)).count == herald.count)
    }

    @Test func eachDaysTruthHoldsTheVisitsThatBeganThatDay() {
        let truth = Self.month
        var total = 0
        for index in truth.days.days.indices {
            let day = truth.truth(ofDay: index)
            #expect(day.devices.count == truth.truth.devices.count)
            #expect(day.visits.allSatisfy { truth.days.dayIndex(at: $0.arrive) == index })
            total += day.visits.count
        }
        #expect(total == truth.truth.visits.count)
    }

    @Test func aSeedRepeatsTheDays() {
        let again = MultiDayVenue.generate(days: DaySchedule(schedule: nil, days: 10), venue: Self.venue)
        #expect(again.truth.devices == Self.month.truth.devices)
        #expect(again.truth.visits == Self.month.truth.visits)
        var other = Self.venue
        other.seed = 10
        #expect(MultiDayVenue.generate(days: DaySchedule(schedule: nil, days: 10), venue: other).truth.visits != Self.month.truth.visits)
    }

    @Test func mallocInfoIsReadAsTheHeapInUse() {
        let xml = """
            <malloc version="1">
            <heap nr="0">
            <total type="fast" count="1" size="32"/>
            <total type="rest" count="2" size="999"/>
            <system type="current" size="5000"/>
            </heap>
            <total type="fast" count="3" size="100"/>
            <total type="rest" count="4" size="400"/>
            <total type="mmap" count="1" size="2000"/>
            <system type="current" size="10000"/>
            <system type="max" size="20000"/>
            </malloc>
            """
        #expect(ProcessMemory.heapInUse(malloc_info: xml) == 10000 - 100 - 400 + 2000)
        let now = ProcessMemory.now()
        #expect((now.residentBytes ?? 0) > 1_000_000)
        #expect((now.heapBytes ?? 0) > 0)
    }
}
