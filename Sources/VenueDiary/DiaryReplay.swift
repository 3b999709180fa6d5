/// What a replay did.
public struct ReplaySummary: Sendable, Equatable {
    /// Rows read from the file.
    public var sightings = 0
    /// Sightings weaker than `min_rssi`, ignored.
    public var ignoredWeak = 0
    /// Checked-in visits found (written to the diary unless `recording_days = 0`).
    public var visits = 0
    /// Visits that closed before checking in, never written.
    public var walkPasts = 0
    /// Transactions committed.
    public var batches = 0

    public init() {}
}

/// `venue-beacon diary replay FILE`: sightings through the same tracker and batched writer as
/// the live service.
///
/// The whole file is parsed and validated first, so a bad row changes nothing. Sightings are
/// then replayed in time order and committed in batches (``FlushPolicy/replay``): a replay
/// killed midway leaves the earlier batches committed and the file intact, and running it again
/// converges on the same visits (rows are keyed by kind, payload and check-in). At the end of
/// the file every visit is closed at its last sighting, as if time ran on past the check-out
/// limit. Open visits already in the diary are left alone (a replay is not a restart).
public enum DiaryReplay {
    /// Parses a sightings file (see ``SightingsCSV``) and replays it.
    public static func replay(
        csv: [UInt8], into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay,
        afterBatch: ((ReplaySummary) -> Void)? = nil
    ) throws -> ReplaySummary {
        let sightings = try SightingsCSV.parse(csv)
        return try replay(sightings, into: store, settings: settings, policy: policy, afterBatch: afterBatch)
    }

    /// Replays sightings (sorted by time first, keeping the file order of equal times).
    /// `afterBatch` is called after every committed transaction with the summary so far.
    public static func replay(
        _ sightings: [Sighting], into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay,
        afterBatch: ((ReplaySummary) -> Void)? = nil
    ) throws -> ReplaySummary {
        var ordered = sightings
        if !sightings.indices.dropFirst().allSatisfy({ sightings[$0 - 1].time <= sightings[$0].time }) {
            ordered = sightings.enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
                .map(\.element)
        }
        guard let start = ordered.first?.time, let end = ordered.last?.time else { return ReplaySummary() }
        return try replay(sightingCount: ordered.count, start: start, end: end, into: store, settings: settings, policy: policy, afterBatch: afterBatch) { feed in
            for sighting in ordered { try feed(sighting) }
        }
    }

    /// Replays `sightingCount` sightings from `start` to `end` that `sightings` hands to its argument
    /// one by one, in time order (a file streamed from disk, ``SightingsFile``).
    public static func replay(
        sightingCount: Int, start: Double, end: Double, into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay,
        afterBatch: ((ReplaySummary) -> Void)? = nil, sightings: ((Sighting) throws -> Void) throws -> Void
    ) throws -> ReplaySummary {
        var summary = ReplaySummary()
        summary.sightings = sightingCount
        guard sightingCount > 0 else { return summary }

        var diary = try VenueDiary(store: store, settings: settings, now: start, policy: policy, resumingOpenVisits: false)
        func count(_ changes: [VisitChange]) {
            for change in changes {
                switch change.event {
                case .checkedOut: summary.visits += 1
                case .walkPast: summary.walkPasts += 1
                case .reopened: summary.visits -= 1  // it checks out again later
                case .checkedIn, .updated: break
                }
            }
            if diary.committedBatches != summary.batches {
                summary.batches = diary.committedBatches
                summary.ignoredWeak = diary.tracker.counters.ignoredWeak
                afterBatch?(summary)
            }
        }
        // The clock ticks once per second of replayed time, as the live service's would.
        var lastTick = -Double.infinity
        try sightings { sighting in
            if sighting.time - lastTick >= 1 {
                count(try diary.tick(now: sighting.time))
                lastTick = sighting.time
            }
            diary.record(sighting)
        }
        count(try diary.close(now: end, checkingOutOpenVisits: true))
        summary.ignoredWeak = diary.tracker.counters.ignoredWeak
        return summary
    }
}
