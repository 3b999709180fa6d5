import Foundation

/// One opening range on a weekday, in minutes after local midnight.
///
/// `end <= start` means the range runs past midnight into the next day ("18:00-02:00" on a
/// Friday is Friday 18:00 to Saturday 02:00). `end == 1440` is "24:00".
public struct OpeningRange: Sendable, Equatable, CustomStringConvertible {
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    public var passesMidnight: Bool { end <= start }

    public var description: String { "\(Self.clock(start))-\(Self.clock(end))" }

    public static func clock(_ minutes: Int) -> String {
        let h = minutes / 60, m = minutes % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }
}

/// Opening hours per weekday, in the local time of a time zone.
///
/// Times are wall-clock times: on the night clocks go forward, a range that starts in the
/// skipped hour opens when the clock jumps past its start; on the night they go back, the
/// repeated hour is open or closed twice, as the wall clock says. Pure: no clock is read here.
public struct Schedule: Sendable, Equatable {
    /// Monday first: `days[0]` is Monday, `days[6]` Sunday.
    public var days: [[OpeningRange]]
    public var timeZone: TimeZone

    public static let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    public init(days: [[OpeningRange]], timeZone: TimeZone = .current) {
        self.days = days.count == 7 ? days : Array(repeating: [], count: 7)
        self.timeZone = timeZone
    }

    /// Whether the venue is open at `date`.
    public func isOpen(at date: Date) -> Bool {
        let (day, second) = localDayAndSecond(date)
        let weekday = Self.weekday(ofDay: day)
        let yesterday = (weekday + 6) % 7
        for range in days[weekday] {
            let end = range.passesMidnight ? 86_400 : range.end * 60
            if second >= range.start * 60 && second < end { return true }
        }
        for range in days[yesterday] where range.passesMidnight {
            if second < range.end * 60 { return true }
        }
        return false
    }

    /// The first instant after `date` at which `isOpen` changes, or nil if it never changes
    /// within the next week (open around the clock, or closed every day).
    public func nextChange(after date: Date) -> Date? {
        let now = isOpen(at: date)
        for candidate in candidates(after: date) where isOpen(at: candidate) != now {
            return candidate
        }
        return nil
    }

    /// Every instant after `date` (within eight days) at which `isOpen` could change: each
    /// range boundary as it falls on each local day, and each time-zone offset change.
    /// `isOpen` is constant between consecutive candidates.
    private func candidates(after date: Date) -> [Date] {
        let (today, _) = localDayAndSecond(date)
        let boundaries = Set(days.flatMap { $0.flatMap { [$0.start, $0.end % 1440] } })
        var instants: [Date] = []
        for day in (today - 1)...(today + 8) {
            for minute in boundaries {
                let wall = day * 86_400 + minute * 60
                instants += instantsShowing(wall: wall)
            }
        }
        let horizon = date.addingTimeInterval(8 * 86_400)
        var cursor = date
        while let transition = timeZone.nextDaylightSavingTimeTransition(after: cursor), transition < horizon {
            instants.append(transition)
            cursor = transition
        }
        return Set(instants.filter { $0 > date && $0 <= horizon }).sorted()
    }

    /// The instants whose local wall time is `wall` (seconds since 1970-01-01 00:00 local):
    /// none in a skipped hour, two in a repeated hour, otherwise one.
    private func instantsShowing(wall: Int) -> [Date] {
        let offsets = Set([-86_400, 0, 86_400].map { timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall + $0))) })
        return offsets.compactMap { offset in
            let instant = Date(timeIntervalSince1970: Double(wall - offset))
            return timeZone.secondsFromGMT(for: instant) == offset ? instant : nil
        }
    }

    /// Local day number (days since 1970-01-01 in local time) and second of that day.
    private func localDayAndSecond(_ date: Date) -> (Int, Int) {
        let local = Int(date.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: date)
        let day = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        return (day, local - day * 86_400)
    }

    /// Monday = 0. Local day 0 (1970-01-01) was a Thursday.
    public static func weekday(ofDay day: Int) -> Int { ((day + 3) % 7 + 7) % 7 }
}
