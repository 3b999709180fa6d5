import Foundation
import VenueNode

/// One calendar day of a multi-day simulated venue, in virtual seconds.
public struct VenueDay: Sendable, Equatable {
    /// 0 for the first day.
    public var index: Int
    /// Local midnight that starts the day.
    public var start: Double
    /// When the venue is open that day, in time order: from each opening range's start to its
    /// end (a range past midnight ends the next morning). Empty on a closed day.
    public var openings: [Opening]

    public struct Opening: Sendable, Equatable {
        public var open: Double
        public var close: Double

        public init(open: Double, close: Double) {
            self.open = open
            self.close = close
        }

        public var duration: Double { close - open }
    }

    public init(index: Int, start: Double, openings: [Opening]) {
        self.index = index
        self.start = start
        self.openings = openings
    }

    /// The next local midnight.
    public var end: Double { start + DaySchedule.secondsPerDay }

    /// The last closing time of the day (its start on a closed day).
    public var lastClosing: Double { openings.last?.close ?? start }

    /// Seconds the venue is open that day.
    public var openSeconds: Double { openings.reduce(0) { $0 + $1.duration } }
}

/// The days of a multi-day simulated venue and their opening hours: the config file's
/// `[schedule]` (weekday by weekday), or 09:00–17:00 every day when it has none.
///
/// The simulated venue's local time is UTC, whatever the config's or the machine's time zone
/// (no summer time, and a seed repeats a run on every machine): virtual time 0 is local midnight
/// of the first day, a Monday (2026-06-01), and the node's loop is given the same weekdays in UTC
/// (``schedule``) so that it opens and closes at the hours the visitors keep. Pure.
public struct DaySchedule: Sendable, Equatable {
    public static let secondsPerDay: Double = 86_400
    /// Most days a run may have.
    public static let maximumDays = 400
    /// 2026-06-01 00:00:00 UTC, a Monday: virtual time 0 of a multi-day run.
    public static let defaultOrigin: Double = 1_780_272_000
    /// 09:00–17:00 on every day of the week.
    public static let defaultHours = [OpeningRange(start: 9 * 60, end: 17 * 60)]

    /// Opening hours per weekday as the node's loop runs them, in UTC.
    public let schedule: Schedule
    /// Unix seconds of virtual time 0 (local midnight of the first day).
    public let origin: Double
    public let days: [VenueDay]

    /// `days` days of `schedule`'s weekly hours (its time zone is replaced by UTC), or of
    /// 09:00–17:00 every day when nil. `origin` must be a UTC midnight.
    public init(schedule: Schedule?, days count: Int, origin: Double = DaySchedule.defaultOrigin) {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0)!
        let weekly = schedule?.days ?? Array(repeating: Self.defaultHours, count: 7)
        self.schedule = Schedule(days: weekly, timeZone: utc)
        self.origin = origin
        let firstDay = Int((origin / Self.secondsPerDay).rounded(.down))
        days = (0..<max(0, count)).map { index in
            let start = Double(index) * Self.secondsPerDay
            let weekday = Schedule.weekday(ofDay: firstDay + index)
            let openings = weekly[weekday].map { range in
                let end = range.passesMidnight ? range.end + 1440 : range.end
                return VenueDay.Opening(open: start + Double(range.start * 60), close: start + Double(end * 60))
            }.sorted { $0.open < $1.open }
            return VenueDay(index: index, start: start, openings: openings)
        }
    }

    /// The day `time` (virtual seconds) falls on.
    public func dayIndex(at time: Double) -> Int {
        Int((time / Self.secondsPerDay).rounded(.down))
    }

    /// Whether the venue is open at `time` by these days' openings (the loop's ``schedule`` says
    /// the same for every day of the run).
    public func isOpen(at time: Double) -> Bool {
        let day = dayIndex(at: time)
        for index in max(0, day - 1)...max(0, day) where index < days.count {
            if days[index].openings.contains(where: { time >= $0.open && time < $0.close }) { return true }
        }
        return false
    }
}
