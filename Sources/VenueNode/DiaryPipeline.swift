import Herald
import Sightings
import VenueDiary

/// Carries the node's ``SensorEvent``s into the venue diary: the one path from Bluetooth to
/// visits, shared by `venue-beacon run`, the simulated venue and `diary replay`
/// (``SightingsReplay`` turns a file's rows into the node's events).
///
/// - `.read` (a payload became known): the target's earlier measurements are attributed to the
///   payload's visit, and the read itself is a sighting (a phone we just read is present);
/// - `.measure` with a payload: a sighting of that payload's visit, by a `VisitKey` cached per
///   target, so the per-advert path costs no payload hashing; a payload the diary does not track
///   yet goes through its admission (``VenueDiary/sight(_:payload:metadata:time:rssi:)``: tracked
///   from its second sighting within the check-out limit, the visit opened at the first), and
///   its target gets a cached key only once admitted, so a flood of one-shot identifiers costs
///   two hashes an advert and no memory here; without a payload nothing happens (the node keeps
///   it and hands it over with the `.read`);
/// - a payload whose identifier is a placeholder (``PlaceholderIdentifier``: Herald's all-zero
///   contact identifier, which every Herald phone sends from 2026-03-18) names no one: it is not
///   a visit (every such phone would merge into one), only counted, and the devices carrying
///   one lately are counted as present (``placeholderDevicesPresent``);
/// - every sighting carries its Bluetooth target as the device it came from, so the diary marks
///   a visit whose identity two devices carry at once (``Visit/sharedIdentity``);
/// - `.share` (payloads a phone wrote to us of phones *it* saw within the last minutes, maybe
///   elsewhere) and `.detect` are not visits: counted, not recorded;
/// - an RSSI of nil (btvirt always; writes without RSSI) is presence all the same: the diary
///   counts it for check-in and check-out and leaves it out of the RSSI statistics.
///
/// Event times are seconds on the node's steady clock; `wallOffset` turns them into the diary's
/// wall-clock Unix seconds (wall = time + offset). ``tick(now:)`` runs once a
/// second: it closes visits, commits when due, purges at the first allowed tick and hourly after,
/// and returns the check-ins and check-outs for logs and LEDs.
///
/// A value with one owner. Its diary blocks on SQLite while it writes, so the live service runs
/// it on a thread of its own.
public struct DiaryPipeline {
    public private(set) var diary: VenueDiary
    public private(set) var counters = Counters()
    private var keys: [TargetID: CachedKey] = [:]
    /// Targets that carried a placeholder identifier, and when last (swept with the keys).
    private var placeholderTargets: [TargetID: Double] = [:]
    private var nextPurge: Double?
    private var nextSweep = -Double.infinity
    /// The latest time retention counts ages from (see ``init(diary:purgingNoLaterThan:)``).
    private let purgeLimit: Double

    public struct Counters: Sendable, Equatable {
        /// Sightings handed to the diary (measurements and reads).
        public var sightings = 0
        /// Earlier measurements handed over with reads.
        public var attributed = 0
        /// Payloads shared by phones, not recorded.
        public var sharedPayloads = 0
        /// Cached keys the diary had released (registered again).
        public var rekeyed = 0
        /// Purges run and visits they deleted.
        public var purges = 0
        public var purged = 0
        /// Sightings (reads and measurements) of placeholder identifiers, not recorded.
        public var placeholderSightings = 0
    }

    struct CachedKey {
        var key: VisitKey
        var payload: SensorPayload
        var lastUsed: Double
    }

    /// How often retention runs.
    public static let purgeInterval: Double = 3600
    /// How long a target's cached key outlives its last use (swept every minute). Short: a key
    /// found again costs one payload hash, while each GAEN identifier (a new one every ~15
    /// minutes per phone) would otherwise hold an entry for an hour.
    public static let keyLifetime: Double = 600
    /// At most this many cached keys (twice the targets the node follows at most). Each target
    /// gets one, and a device flooding adverts from random addresses with random GAEN
    /// identifiers makes a new target a report: beyond this, only the keys used within the last
    /// minute stay (or none, when they are still more than half), a cache miss costing one
    /// payload hash.
    public static let maximumCachedKeys = 32_768
    /// At most this many devices carrying a placeholder are remembered (for
    /// ``placeholderDevicesPresent``): a venue's worth, not a flood's.
    public static let maximumPlaceholderTargets = 4_096

    /// `purgingNoLaterThan` is the latest time retention may take for now. The node leaves it
    /// at infinity (its diary time is now). A replay passes the wall time it started at: it
    /// purges on the replayed time, as a node would have then, but a file stamped ahead of the
    /// clock must not delete visits a live node would still keep.
    public init(diary: VenueDiary, purgingNoLaterThan purgeLimit: Double = .infinity) {
        self.diary = diary
        self.purgeLimit = purgeLimit
    }

    /// Targets with a cached visit key.
    public var cachedKeys: Int { keys.count }

    /// Devices that carried a placeholder identifier within the check-out limit of the last
    /// sweep: present, though no visit can name them (at most ``maximumPlaceholderTargets``).
    public var placeholderDevicesPresent: Int { placeholderTargets.count }

    public mutating func handle(_ event: SensorEvent, wallOffset: Double) {
        switch event {
        case .read(let target, let payload, _, let time) where Self.isPlaceholder(payload):
            notePlaceholder(target.id, time: time + wallOffset)

        case .measure(let target, _, let payload?, _, let time) where Self.isPlaceholder(payload):
            notePlaceholder(target.id, time: time + wallOffset)

        case .read(_, let payload, let earlier, _) where earlier.isEmpty && Self.isAdvertBorne(payload):
            // A payload taken from the advert that brought a new target (GAEN, a configured
            // advert protocol): anyone can send one, a new one each advert. It is not a read
            // over a link; the measurement of that same advert follows at once and goes through
            // admission (``sight(_:_:time:rssi:)``), which keeps its first sighting, so a flood of
            // one-shot identifiers is seen once and never tracked, in `run` as in a replay.
            break

        case .read(let target, let payload, let earlier, let time):
            let wall = time + wallOffset
            var key = self.key(for: target.id, payload: payload, now: wall)
            if !earlier.isEmpty {
                let samples = earlier.map { RSSISample(time: $0.time + wallOffset, rssi: $0.rssi) }
                if !diary.attribute(samples, to: key) {
                    key = rekey(target.id, payload, now: wall)
                    diary.attribute(samples, to: key)
                }
                counters.attributed += samples.count
            }
            record(target.id, payload, key, time: wall, rssi: nil)

        case .measure(let target, let rssi, let payload?, _, let time):
            sight(target.id, payload, time: time + wallOffset, rssi: rssi)

        case .share(_, let payloads, _, _):
            counters.sharedPayloads += payloads.count

        case .delete(let target, _):
            // The node never reports a forgotten target's id again: its key can go at once.
            keys[target.id] = nil
            placeholderTargets[target.id] = nil

        case .measure, .detect, .bluetoothState:
            break
        }
    }

    /// Once a second (wall-clock `now`): closes visits unseen for longer than the check-out
    /// limit, commits when due, and applies retention at the first tick and hourly after.
    /// Returns the visit changes (check-ins, check-outs, walk-pasts). A failed write keeps its
    /// changes for the next tick and throws.
    ///
    /// Retention runs whether or not the system clock is synchronised. A node that never
    /// synchronises (no network at the venue) purges on its own timeline: its clock restarts
    /// from the last saved time at every boot (the Pi has no real-time clock), so visit times
    /// and `now` come from one clock that never runs ahead of the true time, ages are never
    /// overstated, and time powered off is not counted (a visit may be kept longer than
    /// `recording_days` of calendar time, never shorter).
    public mutating func tick(now: Double) throws -> [VisitChange] {
        let changes = try diary.tick(now: now)
        if now >= nextSweep {
            nextSweep = now + 60
            dropKeys(unusedFor: Self.keyLifetime, now: now)
            let checkOut = diary.tracker.checkOut
            placeholderTargets = placeholderTargets.filter { now - $0.value <= checkOut }
        }
        if now >= (nextPurge ?? -.infinity) {
            nextPurge = now + Self.purgeInterval
            counters.purges += 1
            counters.purged += try diary.purge(now: min(now, purgeLimit))
        }
        return changes
    }

    /// The synchronised wall clock stepped; see ``VenueDiary/desynchronise(bootID:wallMinusBoot:)``.
    public mutating func desynchronise(bootID: String, wallMinusBoot: Double) {
        diary.desynchronise(bootID: bootID, wallMinusBoot: wallMinusBoot)
    }

    /// The system clock has been synchronised (see ``VenueDiary/synchronise(bootID:wallMinusBoot:)``):
    /// visits recorded before are corrected and every wall time held here moves by the step.
    /// Hand events over with the new wall offset from now on.
    public mutating func synchronise(bootID: String, wallMinusBoot: Double) throws -> ClockCorrection {
        let correction = try diary.synchronise(bootID: bootID, wallMinusBoot: wallMinusBoot)
        let step = correction.step
        if step != 0 {
            for target in keys.keys { keys[target]?.lastUsed += step }
            for target in placeholderTargets.keys { placeholderTargets[target]? += step }
            nextSweep += step
            nextPurge = nextPurge.map { $0 + step }
        }
        return correction
    }

    /// Closing time: every open visit is closed at its last sighting and written now; the
    /// pipeline records on when the venue opens again.
    public mutating func checkOutAll(now: Double) throws -> [VisitChange] {
        try diary.close(now: now, checkingOutOpenVisits: true)
    }

    /// Writes everything now (before an export); returns the transitions a tick would have.
    public mutating func flush(now: Double) throws -> [VisitChange] {
        try diary.flush(now: now)
    }

    /// The final flush at shutdown; open visits stay open in the diary and are resumed or closed
    /// at the next start.
    public mutating func close(now: Double) throws -> [VisitChange] {
        try diary.close(now: now)
    }

    /// A measurement of a known payload: by its cached key, or through the diary's admission,
    /// caching the key once the diary tracks the payload.
    private mutating func sight(_ target: TargetID, _ payload: SensorPayload, time: Double, rssi: Int?) {
        counters.sightings += 1
        if let index = keys.index(forKey: target), keys.values[index].payload == payload {
            if keys.values[index].payload.metadata == nil, payload.metadata != nil {
                _ = key(for: target, payload: payload, now: time)  // keeps the metadata heard only now
            }
            keys.values[index].lastUsed = time
            if diary.record(keys.values[index].key, time: time, rssi: rssi, carrier: Self.carrier(target)) { return }
            counters.rekeyed += 1
            keys[target] = nil
        }
        guard diary.sight(payload.kind, payload: payload.bytes, metadata: payload.metadataBytes, time: time, rssi: rssi) != nil else { return }
        // Tracked (just admitted, or by another target): cache its key, with the metadata.
        _ = key(for: target, payload: payload, now: time)
    }

    private mutating func key(for target: TargetID, payload: SensorPayload, now: Double) -> VisitKey {
        if let index = keys.index(forKey: target), keys.values[index].payload == payload {
            keys.values[index].lastUsed = now  // in place: one lookup a measurement
            if payload.metadata != nil, keys.values[index].payload.metadata == nil {
                // Metadata heard only after the identifier (a short GAEN advert, a replayed row
                // without it first): the diary keeps the first it is given.
                keys.values[index].payload.metadata = payload.metadata
                _ = diary.key(for: payload.kind, payload: payload.bytes, metadata: payload.metadataBytes)
            }
            return keys.values[index].key
        }
        let key = diary.key(for: payload.kind, payload: payload.bytes, metadata: payload.metadataBytes)
        if keys.count >= Self.maximumCachedKeys {
            dropKeys(unusedFor: 60, now: now)
            if keys.count > Self.maximumCachedKeys / 2 { keys.removeAll() }
        }
        keys[target] = CachedKey(key: key, payload: payload, lastUsed: now)
        return key
    }

    /// Keeps only the cached keys used within `seconds` before `now`.
    private mutating func dropKeys(unusedFor seconds: Double, now: Double) {
        keys = keys.filter { now - $0.value.lastUsed < seconds }
    }

    /// The diary released the identity (unseen for its key lifetime): register it again.
    private mutating func rekey(_ target: TargetID, _ payload: SensorPayload, now: Double) -> VisitKey {
        counters.rekeyed += 1
        keys[target] = nil
        return key(for: target, payload: payload, now: now)
    }

    private mutating func record(_ target: TargetID, _ payload: SensorPayload, _ key: VisitKey, time: Double, rssi: Int?) {
        counters.sightings += 1
        let carrier = Self.carrier(target)
        if !diary.record(key, time: time, rssi: rssi, carrier: carrier) {
            diary.record(rekey(target, payload, now: time), time: time, rssi: rssi, carrier: carrier)
        }
    }

    /// Whether the payload comes in adverts (anyone may send one), not over a link.
    static func isAdvertBorne(_ payload: SensorPayload) -> Bool {
        switch payload.kind {
        case .gaen, .advert: true
        case .herald, .opentrace: false
        }
    }

    static func isPlaceholder(_ payload: SensorPayload) -> Bool {
        PlaceholderIdentifier.isPlaceholder(kind: payload.kind, payload: payload.bytes)
    }

    private mutating func notePlaceholder(_ target: TargetID, time: Double) {
        counters.placeholderSightings += 1
        if placeholderTargets.count < Self.maximumPlaceholderTargets || placeholderTargets[target] != nil {
            placeholderTargets[target] = time
        }
    }

    /// The tracker's tag for the device a sighting came from: the target id mixed down to 32
    /// bits (distinct targets share a tag with probability 2⁻³²), never 0 (0 is "not known").
    static func carrier(_ target: TargetID) -> UInt32 {
        let mixed = UInt32(truncatingIfNeeded: (target.rawValue &* 0x9E37_79B9_7F4A_7C15) >> 32)
        return mixed == 0 ? 1 : mixed
    }
}
