import VenueNode
import Foundation

/// `[schedule]`: opening hours per weekday, in the system's local time. Without the section
/// the node runs around the clock; with it, every weekday must be listed, so a forgotten day
/// is a visible mistake rather than a silent guess.
///
///     monday = "09:00-23:00"
///     friday = "09:00-14:00, 18:00-02:00"   # several ranges; the last runs past midnight
///     sunday = "closed"                     # or "open" for all day
enum ScheduleSettings {
    static let allowed = "must be \"closed\", \"open\" (all day) or opening hours such as \"09:00-23:00\" "
        + "(several separated by commas, e.g. \"09:00-14:00, 18:00-02:00\"; a range that ends earlier than it starts runs past midnight)"

    static func read(_ section: ConfigSection, timeZone: TimeZone = .current) -> Schedule? {
        guard section.isPresent else { return nil }
        var s = section
        var days: [[OpeningRange]] = []
        var complete = true
        for day in Schedule.weekdays {
            var ranges: [OpeningRange]?
            _ = s.requiredString(day, what: "opening hours such as \"09:00-23:00\", \"open\" or \"closed\"") { text in
                switch parseDay(text) {
                case .success(let parsed):
                    ranges = parsed
                    return nil
                case .failure(let problem):
                    return problem.text
                }
            }
            if let ranges { days.append(ranges) } else { complete = false }
        }
        s.finish()
        return complete ? Schedule(days: days, timeZone: timeZone) : nil
    }

    struct Problem: Error { var text: String }

    /// Parses one weekday's value.
    static func parseDay(_ text: String) -> Result<[OpeningRange], Problem> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "closed" { return .success([]) }
        if trimmed == "open" { return .success([OpeningRange(start: 0, end: 1440)]) }
        var ranges: [OpeningRange] = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard ends.count == 2, let start = minutes(ends[0], allow24: false), let end = minutes(ends[1], allow24: true) else {
                return .failure(Problem(text: allowed))
            }
            if start == end {
                let range = part.trimmingCharacters(in: .whitespaces)
                return .failure(Problem(text: "\(range) opens and closes at the same time; write \"open\" for all day or \"closed\""))
            }
            ranges.append(OpeningRange(start: start, end: end))
        }
        return .success(ranges)
    }

    /// "HH:MM" as minutes after midnight; "24:00" only as an end.
    static func minutes(_ text: String, allow24: Bool) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let h = Int(parts[0]), let m = Int(parts[1]), m < 60
        else { return nil }
        if h == 24 && m == 0 && allow24 { return 1440 }
        return h < 24 ? h * 60 + m : nil
    }

    static func toml(_ schedule: Schedule?) -> String {
        guard let schedule else { return "# [schedule] is not set: the node runs around the clock\n" }
        return tomlSection("schedule", zip(Schedule.weekdays, schedule.days).map { day, ranges in
            let text: String
            if ranges.isEmpty {
                text = "closed"
            } else if ranges == [OpeningRange(start: 0, end: 1440)] {
                text = "open"
            } else {
                text = ranges.map(\.description).joined(separator: ", ")
            }
            return (day, TOMLText.quote(text), "")
        })
    }
}
