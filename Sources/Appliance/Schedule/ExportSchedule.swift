import VenueNode
import Foundation

/// `[export] schedule`: when the service exports the share window and delivers it on its own,
/// in the system's local time (as `[schedule]` opening hours): `"daily 03:30"`,
/// `"monday-friday 03:30"`, `"mon,wed,fri 06:00"`.
///
/// Pure: ``due(now:lastDone:)`` says which scheduled time to run at `now` given the last one
/// done, so a time missed while the node was off runs once at the next start, and never twice.
public struct ExportSchedule: Sendable, Equatable, CustomStringConvertible {
    /// Monday first, as ``Schedule/weekdays``.
    public var days: [Bool]
    /// Minutes after local midnight.
    public var minute: Int
    public var timeZone: TimeZone

    public static let allowed = "must be \"off\", or days and a time such as \"daily 03:30\", \"monday-friday 03:30\" "
        + "or \"mon,wed,fri 06:00\" (weekdays as in [schedule], or their first three letters; local time)"

    public init(days: [Bool], minute: Int, timeZone: TimeZone) {
        self.days = days
        self.minute = minute
        self.timeZone = timeZone
    }

    /// Parses the setting; nil for `"off"` or `""`; a failure carries what is allowed.
    public static func parse(_ text: String, timeZone: TimeZone = .current) -> Result<ExportSchedule?, ScheduleTextProblem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.isEmpty || trimmed == "off" { return .success(nil) }
        guard let space = trimmed.lastIndex(of: " ") else { return .failure(ScheduleTextProblem(text: allowed)) }
        let dayText = trimmed[..<space].replacingOccurrences(of: " ", with: "")
        guard let minute = ScheduleSettings.minutes(String(trimmed[trimmed.index(after: space)...]), allow24: false) else {
            return .failure(ScheduleTextProblem(text: allowed))
        }
        var days = [Bool](repeating: false, count: 7)
        if dayText == "daily" {
            days = [Bool](repeating: true, count: 7)
        } else {
            for part in dayText.split(separator: ",", omittingEmptySubsequences: false) {
                let ends = part.split(separator: "-", omittingEmptySubsequences: false).map { weekday(String($0)) }
                guard (1...2).contains(ends.count), let first = ends.first!, let last = ends.last! else {
                    return .failure(ScheduleTextProblem(text: allowed))
                }
                var day = first
                while true {
                    days[day] = true
                    if day == last { break }
                    day = (day + 1) % 7
                }
            }
        }
        return .success(ExportSchedule(days: days, minute: minute, timeZone: timeZone))
    }

    static func weekday(_ text: String) -> Int? {
        Schedule.weekdays.firstIndex { $0 == text || (text.count == 3 && $0.hasPrefix(text)) }
    }

    /// The setting as written back (`config check`).
    public var description: String {
        let time = OpeningRange.clock(minute)
        if days.allSatisfy({ $0 }) { return "daily \(time)" }
        let names = days.indices.filter { days[$0] }.map { Schedule.weekdays[$0] }
        return names.joined(separator: ",") + " " + time
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// The scheduled time on the local day of `day`, if that weekday has one.
    private func slot(onDayOf day: Date, calendar: Calendar) -> Date? {
        let weekday = (calendar.component(.weekday, from: day) + 5) % 7  // Calendar: 1 = Sunday
        guard days[weekday] else { return nil }
        return calendar.date(bySettingHour: minute / 60, minute: minute % 60, second: 0, of: day)
    }

    /// The latest scheduled time at or before `date` (within the last eight days).
    public func latest(atOrBefore date: Date) -> Date? {
        let calendar = calendar
        let today = calendar.startOfDay(for: date)
        for back in 0...8 {
            guard let day = calendar.date(byAdding: .day, value: -back, to: today) else { continue }
            if let slot = slot(onDayOf: day, calendar: calendar), slot <= date { return slot }
        }
        return nil
    }

    /// The first scheduled time after `date`.
    public func next(after date: Date) -> Date? {
        let calendar = calendar
        let today = calendar.startOfDay(for: date)
        for ahead in 0...8 {
            guard let day = calendar.date(byAdding: .day, value: ahead, to: today) else { continue }
            if let slot = slot(onDayOf: day, calendar: calendar), slot > date { return slot }
        }
        return nil
    }

    /// The scheduled time to export for at `now`: the latest one at or before `now`, if it is
    /// later than `lastDone` (the last one exported for, or when the schedule was first seen).
    /// Several missed times give one export, for the latest.
    public func due(now: Date, lastDone: Date) -> Date? {
        guard let slot = latest(atOrBefore: now), slot > lastDone else { return nil }
        return slot
    }
}

public struct ScheduleTextProblem: Error, Equatable {
    public var text: String
}
