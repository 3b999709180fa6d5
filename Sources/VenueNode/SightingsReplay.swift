import BLEHost
import Herald
import Sightings
import VenueDiary

/// `venue-beacon diary replay FILE`: a sightings file through the node's own diary path, the
/// ``DiaryPipeline`` of `venue-beacon run` and the simulated venue, so a replayed evening is
/// recorded as the node would have recorded it (one implementation of sightings → visits, its
/// key cache, retention and commits).
///
/// - Each row becomes the event the node emits for a measured phone whose payload it knows:
///   `.measure(target, rssi:, payload:, time:)`, with one ``TargetID`` per (kind, payload) (see
///   ``targetID(_:_:)``). Rows carry their payload, so there is nothing to attribute late: the
///   node's `.read` with earlier measurements has no row to come from (docs/diary.md says why
///   the file has no device column).
/// - The clock ticks at the first row of every replayed second that has rows (not through the
///   empty seconds of a gap: a tick at the next row closes what the gap ended, as the node's
///   ticks would have); what a tick does, commits by the policy (``FlushPolicy/replay``) and
///   retention hourly, is the pipeline's.
/// - Retention counts ages from the replayed time, as a node recording then would have, but
///   never from later than `now`, the wall time the replay started: replaying an old file
///   deletes no more than the node did then, and a file stamped ahead of the clock cannot delete
///   visits a live node would still keep.
/// - Open visits already in the diary are left alone (a replay is not a restart); at the end
///   every visit is closed at its last sighting, as if time ran on past the check-out limit.
///
/// Why the pipeline and not the whole ``DiaryKeeper``: what the keeper adds around the
/// pipeline is the live node's, and wrong for a file: the unsynchronised clock and its
/// correction (replayed times are wall times), Herald-format logs, log lines for every check-in,
/// and retrying a failed write at the next tick while the radio runs on (a replay stops at the
/// first failed write and says why; run again, it converges). Its tick is the pipeline's tick,
/// so the purge and commit cadence are the same.
///
/// The whole input is checked before the diary is opened, so a bad row changes nothing.
/// Batches are committed as the replay goes: a replay killed midway leaves the earlier batches
/// committed, and running it again converges on the same visits (rows are keyed by kind,
/// payload and check-in).
public enum SightingsReplay {
    /// Parses a sightings file held in memory (see ``SightingsCSV``) and replays it.
    public static func replay(
        csv: [UInt8], into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay, now: Double,
        afterBatch: ((ReplaySummary) -> Void)? = nil
    ) throws -> ReplaySummary {
        let sightings = try SightingsCSV.parse(csv, now: now)
        return try replay(sightings, into: store, settings: settings, policy: policy, now: now, afterBatch: afterBatch)
    }

    /// Replays a file that ``SightingsFile/scan(_:now:)`` has checked, reading it a second time
    /// (the diary is opened in between, so a bad file never touches it).
    public static func replay(
        _ scan: SightingsFile.Scan, into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay, now: Double,
        afterBatch: ((ReplaySummary) -> Void)? = nil
    ) throws -> ReplaySummary {
        try replay(
            sightingCount: scan.sightings, start: scan.first, end: scan.last, into: store, settings: settings, policy: policy,
            now: now, afterBatch: afterBatch
        ) { feed in
            try SightingsFile.forEachSighting(of: scan, feed)
        }
    }

    /// Checks the whole file, then replays it. A bad line throws ``SightingsCSVError`` before
    /// anything is written.
    public static func replay(
        path: String, into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay, now: Double,
        afterBatch: ((ReplaySummary) -> Void)? = nil
    ) throws -> ReplaySummary {
        try replay(try SightingsFile.scan(path, now: now), into: store, settings: settings, policy: policy, now: now, afterBatch: afterBatch)
    }

    /// Replays sightings, sorted by time first (equal times keep their order).
    public static func replay(
        _ sightings: [Sighting], into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay, now: Double,
        afterBatch: ((ReplaySummary) -> Void)? = nil
    ) throws -> ReplaySummary {
        var ordered = sightings
        if !sightings.indices.dropFirst().allSatisfy({ sightings[$0 - 1].time <= sightings[$0].time }) {
            ordered = sightings.enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
                .map(\.element)
        }
        guard let start = ordered.first?.time, let end = ordered.last?.time else { return ReplaySummary() }
        return try replay(
            sightingCount: ordered.count, start: start, end: end, into: store, settings: settings, policy: policy, now: now,
            afterBatch: afterBatch
        ) { feed in
            for sighting in ordered { try feed(sighting) }
        }
    }

    /// Replays `sightingCount` sightings from `start` to `end` that `sightings` hands to its
    /// argument one by one, in time order. `afterBatch` is called after every committed
    /// transaction with the summary so far.
    public static func replay(
        sightingCount: Int, start: Double, end: Double, into store: DiaryStore, settings: DiarySettings, policy: FlushPolicy = .replay,
        now: Double, afterBatch: ((ReplaySummary) -> Void)? = nil, sightings: ((Sighting) throws -> Void) throws -> Void
    ) throws -> ReplaySummary {
        var summary = ReplaySummary()
        summary.sightings = sightingCount
        guard sightingCount > 0 else { return summary }

        let diary = try VenueDiary(store: store, settings: settings, now: start, policy: policy, resumingOpenVisits: false)
        var pipeline = DiaryPipeline(diary: diary, purgingNoLaterThan: now)
        func counters() {
            let tracker = pipeline.diary.tracker.counters
            summary.ignoredWeak = tracker.ignoredWeak
            summary.walkPasts += tracker.seenOnce - summary.seenOnce
            summary.seenOnce = tracker.seenOnce
            summary.forgottenEarly = tracker.forgottenEarly
            summary.pendingEvicted = tracker.pendingVisitsEnded
            summary.placeholders = pipeline.counters.placeholderSightings
        }
        func count(_ changes: [VisitChange]) {
            summary.count(changes)
            if pipeline.diary.committedBatches != summary.batches {
                summary.batches = pipeline.diary.committedBatches
                counters()
                afterBatch?(summary)
            }
        }
        var tickedSecond = -Double.infinity
        try sightings { sighting in
            let second = sighting.time.rounded(.down)
            if second > tickedSecond {
                tickedSecond = second
                count(try pipeline.tick(now: sighting.time))
            }
            pipeline.handle(event(sighting), wallOffset: 0)
        }
        count(try pipeline.checkOutAll(now: end))
        counters()
        return summary
    }

    /// The node's event for a sighting: a measurement of a target whose payload is known.
    /// Replayed times are wall times already (the pipeline is handed a wall offset of 0).
    static func event(_ sighting: Sighting) -> SensorEvent {
        let id = targetID(sighting.kind, sighting.payload)
        let target = Target(id: id, address: BluetoothAddress(rawValue: id.rawValue), addressType: .random)
        let payload = SensorPayload(kind: sighting.kind, bytes: sighting.payload, metadata: sighting.metadata.flatMap(metadataWord))
        return .measure(target, rssi: sighting.rssi, payload: payload, time: sighting.time)
    }

    /// One target a (kind, payload), computed rather than looked up so the replay holds nothing
    /// per payload (its memory stays fixed for a file in time order): a 64-bit FNV-1a hash.
    /// Two payloads that collide share a target and cost the pipeline's key cache a lookup each
    /// time they alternate (it compares payloads), never a wrong visit.
    static func targetID(_ kind: PayloadKind, _ payload: [UInt8]) -> TargetID {
        let kindByte: UInt64
        switch kind {
        case .herald: kindByte = 1
        case .gaen: kindByte = 2
        case .opentrace: kindByte = 3
        case .advert: kindByte = 4
        }
        var hash = (0xCBF2_9CE4_8422_2325 ^ kindByte) &* 0x100_0000_01B3
        for byte in payload {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return TargetID(rawValue: hash)
    }

    /// A GAEN advert's 4 bytes of metadata as ``SensorPayload/metadata`` holds them (big-endian).
    private static func metadataWord(_ bytes: [UInt8]) -> UInt32? {
        guard bytes.count == 4 else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
