import Foundation

/// One day of a multi-day run: the day's visits judged against the diary as it stood at the end
/// of the day, what retention did, and what the diary and the simulator weighed then.
public struct DayReport: Sendable, Equatable, Codable {
    /// 1 for the first day.
    public var day: Int
    /// The local date (UTC), yyyy-mm-dd.
    public var date: String
    /// Visitors that day, of whom regulars who came on an earlier day.
    public var visitors: Int
    public var regulars: Int
    /// The day's visits (those that began that day) judged against the diary's visits that
    /// began that day (``EfficacyReport``: Herald phones).
    public var recall: Double
    public var precision: Double
    public var eligibleVisits: Int
    public var recalledVisits: Int
    /// The day's visits no node could record, not counted in recall (``EfficacyReport/hiddenVisits``).
    public var hiddenVisits: Int
    public var splitVisits: Int
    public var phantomVisits: Int
    public var checkInErrorSeconds: ErrorStatistics
    /// Every visit in the diary at the day's end (all days, all kinds), and the oldest one's
    /// check-out (or last sighting) in days before the day's end.
    public var diaryVisits: Int
    public var oldestVisitDays: Double?
    /// Visits the loop's retention deleted during the day.
    public var purgedVisits: Int
    /// Visits still in the diary whose check-out is older than `recording_days` plus the loop's
    /// purge interval (an hour) at the day's end: retention missed them (0 expected).
    public var expiredVisitsInDiary: Int
    /// Identities (payloads) the diary held at the day before's end and holds no more, whose
    /// bytes are still in the diary file or its write-ahead log (0 expected: secure_delete).
    public var purgedPayloadsInFile: Int
    /// The diary file with its write-ahead log, bytes.
    public var diaryBytes: Int
    public var memory: ProcessMemory
    /// The injected faults over by the day's end (those begun the night before included).
    public var faults: [FaultOutcome] = []

    enum CodingKeys: String, CodingKey {
        case day, date, visitors, regulars, recall, precision
        case eligibleVisits = "eligible_visits", recalledVisits = "recalled_visits", hiddenVisits = "hidden_visits"
        case splitVisits = "split_visits", phantomVisits = "phantom_visits", checkInErrorSeconds = "check_in_error_seconds"
        case diaryVisits = "diary_visits", oldestVisitDays = "oldest_visit_days", purgedVisits = "purged_visits"
        case expiredVisitsInDiary = "expired_visits_in_diary", purgedPayloadsInFile = "purged_payloads_in_file"
        case diaryBytes = "diary_bytes", memory, faults
    }
}

/// A multi-day run's report: every day's, and the run's totals.
public struct MultiDayReport: Sendable, Equatable, Codable {
    public var days: [DayReport]
    public var overall: Overall
    public var venue: Venue

    public struct Venue: Sendable, Equatable, Codable {
        public var seed: UInt64
        public var days: Int
        public var visitorsPerDay: Int
        public var recordingDays: Int?
        /// Whether faults were injected (`--faults`).
        public var faults: Bool = false
        /// Opening hours per weekday, Monday first, as the run kept them (UTC).
        public var openingHours: [String]

        enum CodingKeys: String, CodingKey {
            case seed, days, visitorsPerDay = "visitors_per_day", recordingDays = "recording_days", faults
            case openingHours = "opening_hours"
        }
    }

    public struct Overall: Sendable, Equatable, Codable {
        public var eligibleVisits: Int
        public var recalledVisits: Int
        public var hiddenVisits: Int
        /// Recalled ÷ eligible over all days, and the lowest day's recall.
        public var recall: Double
        public var lowestDailyRecall: Double
        public var splitVisits: Int
        public var phantomVisits: Int
        public var purgedVisits: Int
        public var expiredVisitsInDiary: Int
        public var purgedPayloadsInFile: Int
        /// Faults injected and over, by kind (`controller_lost`, …).
        public var faults: [String: Int]

        enum CodingKeys: String, CodingKey {
            case eligibleVisits = "eligible_visits", recalledVisits = "recalled_visits", hiddenVisits = "hidden_visits", recall
            case lowestDailyRecall = "lowest_daily_recall", splitVisits = "split_visits", phantomVisits = "phantom_visits"
            case purgedVisits = "purged_visits", expiredVisitsInDiary = "expired_visits_in_diary"
            case purgedPayloadsInFile = "purged_payloads_in_file", faults
        }

        public init(_ days: [DayReport]) {
            eligibleVisits = days.reduce(0) { $0 + $1.eligibleVisits }
            recalledVisits = days.reduce(0) { $0 + $1.recalledVisits }
            hiddenVisits = days.reduce(0) { $0 + $1.hiddenVisits }
            recall = eligibleVisits == 0 ? 1 : Double(recalledVisits) / Double(eligibleVisits)
            lowestDailyRecall = days.map(\.recall).min() ?? 1
            splitVisits = days.reduce(0) { $0 + $1.splitVisits }
            phantomVisits = days.reduce(0) { $0 + $1.phantomVisits }
            purgedVisits = days.reduce(0) { $0 + $1.purgedVisits }
            expiredVisitsInDiary = days.map(\.expiredVisitsInDiary).max() ?? 0
            purgedPayloadsInFile = days.reduce(0) { $0 + $1.purgedPayloadsInFile }
            faults = days.flatMap(\.faults).reduce(into: [:]) { $0[$1.kind.rawValue, default: 0] += 1 }
        }
    }

    public init(days: [DayReport], venue: Venue) {
        self.days = days
        self.venue = venue
        overall = Overall(days)
    }

    /// One JSON object on one line, keys sorted.
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The report for people: a line a day, then the totals.
    public var text: String {
        func percent(_ x: Double) -> String { String(format: "%.1f%%", x * 100) }
        func mb(_ bytes: Int?) -> String { bytes.map { String(format: "%.1f MB", Double($0) / 1_000_000) } ?? "–" }
        var lines = [
            "Multi-day efficacy: \(venue.days) days, \(venue.visitorsPerDay) visitors a day, seed \(venue.seed), "
                + "recording_days \(venue.recordingDays.map(String.init) ?? "forever")",
            "  day  date        recall  precision  split  phantom  in diary  purged  diary file  resident  heap",
        ]
        for d in days {
            let columns = [
                (String(d.day), 3), (d.date, 10), (percent(d.recall), 6), (percent(d.precision), 9), (String(d.splitVisits), 5),
                (String(d.phantomVisits), 7), (String(d.diaryVisits), 8), (String(d.purgedVisits), 6), (mb(d.diaryBytes), 10),
                (mb(d.memory.residentBytes), 8), (mb(d.memory.heapBytes), 0),
            ]
            lines.append("  " + columns.map { String(repeating: " ", count: max(0, $0.1 - $0.0.count)) + $0.0 }.joined(separator: "  "))
            if d.hiddenVisits > 0 {
                lines.append("       hidden: \(d.hiddenVisits) visit\(d.hiddenVisits == 1 ? "" : "s") no node could record, not in recall")
            }
            for fault in d.faults { lines.append("       fault: " + fault.summary) }
        }
        lines.append(
            "  overall: recall \(percent(overall.recall)) (\(overall.recalledVisits) of \(overall.eligibleVisits)"
                + (overall.hiddenVisits > 0 ? "; \(overall.hiddenVisits) hidden" : "") + "), "
                + "lowest day \(percent(overall.lowestDailyRecall)), \(overall.splitVisits) split, \(overall.phantomVisits) phantom, "
                + "\(overall.purgedVisits) visits purged, \(overall.expiredVisitsInDiary) expired visits left in the diary, "
                + "\(overall.purgedPayloadsInFile) purged identities still in its file"
                + (venue.faults ? "; faults: " + overall.faults.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ") : ""))
        return lines.joined(separator: "\n")
    }
}
