import Foundation
import Herald
import VenueDiary
import VenueNode

/// A venue over many days through the node as `venue-beacon run` ships it: one ``VenueRun`` (the
/// host engine, the radio loop, the diary loop) on virtual time from the first midnight to the
/// last day's end, with the days' opening hours given to the radio loop as `run` gives it
/// `[schedule]`. So every night is the loop's own: at closing it switches advertising and
/// scanning off and the diary closes the open visits at their last sighting; through the night it
/// idles and ticks; in the morning it switches the radio on. Retention runs on the diary loop's
/// own cadence (at the first tick and hourly) on virtual time, with the config's
/// `recording_days`, so visits are purged as they would be at the venue.
///
/// After each day (at the next midnight, or the last closing plus the check-out limit and a
/// minute when the venue closes later) the day is judged: the visits that began that day against
/// the diary's visits that began that day, as the diary stands then, with what retention did and
/// what the diary file and this process weigh, and what the faults over by then did (with
/// `faults`, ``FaultSchedule``: injected through the node's own paths, see ``VenueRun``).
public struct MultiDayRun {
    public let venue: MultiDayTruth
    /// The faults injected (``FaultSchedule``), if any.
    public let faults: FaultSchedule?
    public private(set) var run: VenueRun
    public private(set) var reports: [DayReport] = []
    /// The diary file, for its size; nil when not on disk.
    private let diaryPath: String?
    private let recordingDays: Int?
    private let checkOutSeconds: Double
    /// The identities (payloads) in the diary at the last day's end.
    private var payloadsBefore: Set<[UInt8]> = []

    public init(
        venue: MultiDayTruth, setup: NodeSetup = NodeSetup(), air: AirConfiguration = AirConfiguration(), store: DiaryStore,
        diaryPath: String?, heraldLogs: HeraldLogWriter? = nil, faults: FaultSchedule? = nil
    ) throws {
        self.venue = venue
        self.faults = faults
        self.diaryPath = diaryPath
        recordingDays = setup.diary.recordingDays
        checkOutSeconds = setup.diary.checkOutSeconds
        run = try VenueRun(
            truth: venue.truth, setup: setup, air: air, store: store, diaryPath: diaryPath, heraldLogs: heraldLogs,
            schedule: venue.days.schedule)
        run.keepsReads = false  // not reported per day; kept, they would grow for the whole run
        if let faults { run.inject(faults) }
    }

    /// The day ``runDay()`` runs next (0 first); `venue.days.days.count` when done.
    public var nextDay: Int { reports.count }

    /// Virtual time at which day `index` is judged.
    public func end(ofDay index: Int) -> Double {
        let day = venue.days.days[index]
        return max(day.end, day.lastClosing + checkOutSeconds + 60)
    }

    /// Runs the next day to its end (``end(ofDay:)``), in steps of at most `step` virtual seconds
    /// with `between` called after each, and judges it (``endDay()``).
    public mutating func runDay(step: Double = .infinity, between: (VenueRun) -> Void = { _ in }) throws -> DayReport {
        let end = end(ofDay: nextDay)
        while run.now < end {
            advance(until: min(end, run.now + step))
            between(run)
        }
        return try endDay()
    }

    /// Runs until virtual time `end` (a driver that paces itself goes a step at a time).
    public mutating func advance(until end: Double) {
        run.run(until: end)
    }

    /// Judges the next day, once the run has reached its end (``end(ofDay:)``).
    public mutating func endDay() throws -> DayReport {
        precondition(nextDay < venue.days.days.count && run.now >= end(ofDay: nextDay), "the day has not ended")
        let day = nextDay
        let report = try judge(day: day)
        reports.append(report)
        // Judging a day needs the writes of that day's stays only.
        run.air.forgetPayloadWrites(before: venue.days.days[day].end)
        return report
    }

    /// Writes the diary's last batch.
    public mutating func finish() {
        run.finish()
    }

    /// The run's report so far.
    public var report: MultiDayReport {
        let setup = venue.days.schedule
        return MultiDayReport(
            days: reports,
            venue: .init(
                seed: venue.truth.configuration.seed, days: venue.days.days.count, visitorsPerDay: venue.truth.configuration.visitors,
                recordingDays: recordingDays, faults: faults != nil,
                openingHours: setup.days.map { $0.isEmpty ? "closed" : $0.map(\.description).joined(separator: ", ") }))
    }

    private mutating func judge(day index: Int) throws -> DayReport {
        let day = venue.days.days[index]
        let origin = venue.days.origin
        // The diary as it stands (a restart, a fault, opened the file again).
        let visits = try run.store.visits()
        // The diary's visits that began that day, judged against the truth of that day.
        let ofDay = visits.filter { $0.checkIn - origin >= day.start && $0.checkIn - origin < day.end }
        let efficacy = EfficacyReport(truth: venue.truth(ofDay: index), diary: ofDay, payloadWrites: run.air.payloadWrites)
        let now = origin + run.now
        let ends = visits.map { $0.checkOut ?? $0.lastSeen }
        var expired = 0
        if let recordingDays {
            let limit = now - Double(recordingDays) * DaySchedule.secondsPerDay - DiaryPipeline.purgeInterval
            expired = ends.filter { $0 < limit }.count
        }
        let purged = run.purgedVisits
        // Identities the diary held yesterday and holds no more: their bytes must be gone from the
        // file too (secure_delete). Checked once, the day they go: one that comes back is held again.
        let payloads = Set(visits.map(\.payload))
        let gone = payloadsBefore.subtracting(payloads)
        payloadsBefore = payloads
        let left = diaryPath.map { Self.occurrences(of: gone, inFilesAt: $0) } ?? 0
        let date = Date(timeIntervalSince1970: origin + day.start)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = venue.days.schedule.timeZone
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        let text = String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
        return DayReport(
            day: index + 1, date: text, visitors: venue.visitorsByDay[index], regulars: venue.regularsByDay[index],
            recall: efficacy.recall, precision: efficacy.precision, eligibleVisits: efficacy.eligibleVisits,
            recalledVisits: efficacy.recalledVisits, hiddenVisits: efficacy.hiddenVisits, splitVisits: efficacy.splitVisits, phantomVisits: efficacy.phantomVisits,
            checkInErrorSeconds: efficacy.checkInErrorSeconds, diaryVisits: visits.count,
            oldestVisitDays: ends.min().map { (now - $0) / DaySchedule.secondsPerDay },
            purgedVisits: purged - purgedSoFar, expiredVisitsInDiary: expired, purgedPayloadsInFile: left,
            diaryBytes: diaryPath.map(Self.fileBytes) ?? 0, memory: .now(), faults: run.takeFaultOutcomes())
    }

    /// Purged visits counted up to the last day judged.
    private var purgedSoFar: Int { reports.reduce(0) { $0 + $1.purgedVisits } }

    /// How many of `payloads` occur anywhere in the bytes of the file at `path` or its
    /// write-ahead log (one pass over each, looking payloads up by their first 8 bytes).
    static func occurrences(of payloads: Set<[UInt8]>, inFilesAt path: String) -> Int {
        var byPrefix: [UInt64: [[UInt8]]] = [:]
        for payload in payloads where payload.count >= 8 {
            let prefix = payload.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            byPrefix[prefix, default: []].append(payload)
        }
        guard !byPrefix.isEmpty else { return 0 }
        var found = Set<[UInt8]>()
        for suffix in ["", "-wal"] {
            guard let data = FileManager.default.contents(atPath: path + suffix), data.count >= 8 else { continue }
            data.withUnsafeBytes { file in
                for offset in 0...(file.count - 8) {
                    guard let candidates = byPrefix[file.loadUnaligned(fromByteOffset: offset, as: UInt64.self)] else { continue }
                    for payload in candidates where offset + payload.count <= file.count {
                        if file[offset..<(offset + payload.count)].elementsEqual(payload) { found.insert(payload) }
                    }
                }
            }
        }
        return found.count
    }

    /// The diary file and its write-ahead log.
    static func fileBytes(_ path: String) -> Int {
        ["", "-wal"].reduce(0) { total, suffix in
            let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix))?[.size] as? NSNumber
            return total + (size?.intValue ?? 0)
        }
    }
}
