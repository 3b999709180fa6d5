import Sightings

/// Turns sightings into visits: the venue-side version of Herald's venue diary state machine.
///
/// Per distinct (kind, payload):
/// - a visit opens at its first sighting and is **pending** until `last − first > checkIn`
///   (strictly greater), then **checked in**;
/// - a gap of more than `checkOut` between sightings closes the visit at its last sighting, and
///   the next sighting opens a new visit (a gap of exactly `checkOut` keeps it open);
/// - a pending visit that closes is a **walk-past** and is never written;
/// - sightings weaker than `minRSSI` are ignored entirely;
/// - a sighting without an RSSI (nil: the controller could not measure one, or the phone wrote to
///   us) is presence all the same: it opens and extends visits whatever `minRSSI` says, and leaves
///   the RSSI statistics (samples, strongest, mean) alone;
/// - a visit whose `last − first` reaches `maxVisit` is closed there, and the next sighting opens
///   a new one (a phone left behind does not make a week-long visit).
///
/// It is a value owned by one owner, does no I/O and reads no clock: time arrives with every
/// sighting and through ``advance(to:)``, which closes visits unseen for longer than `checkOut`.
/// State changes collect inside and are taken with ``takeChanges(includingUpdates:)``.
///
/// Identities are interned: ``key(for:payload:)`` hashes a payload once and returns a small key;
/// ``record(_:time:rssi:)`` is then an array update that neither hashes nor allocates, which is
/// what lets one core follow tens of thousands of phones.
///
/// **Admission.** Measurements by value (``sight(_:payload:metadata:time:rssi:)``, the node's
/// adverts and replayed rows) give an identity a key only at its second sighting within the
/// check-out limit: the first waits in a bounded filter of first sightings (``FirstSightings``,
/// 16 bytes each, at most ``maximumFirstSightings``), and the visit opens at it, so check-in is
/// still the first sighting. A one-sighting visit was always a walk-past; now it never takes a
/// slot, and a flood of one-shot identifiers (BLE advert spam) cannot push phones out.
public struct PresenceTracker: Sendable {
    /// What the tracker dropped or counted, for logs and statistics.
    public struct Counters: Sendable, Equatable {
        /// Sightings and attributed samples folded into a visit.
        public var sightings = 0
        /// Sightings and samples weaker than `minRSSI`.
        public var ignoredWeak = 0
        /// Records made with a key whose identity had already been released.
        public var staleKeys = 0
        /// Late samples that fit no visit (too early, or inside an already closed visit).
        public var droppedSamples = 0
        /// Identities released early to make room (``maximumIdentities``), and of those the
        /// ones whose pending visit ended as a walk-past then.
        public var identitiesEvicted = 0
        public var pendingVisitsEnded = 0
        /// First sightings of identities without a key, remembered rather than tracked
        /// (``sight(_:payload:metadata:time:rssi:)``). Each ends as one of: `admitted` (seen
        /// again within `checkOut`: a visit from that first sighting), `seenOnce` (forgotten:
        /// never a visit, a walk-past of one sighting; under a flood, nearly every identifier),
        /// or still remembered (``firstSightingsHeld``).
        public var firstSightings = 0
        public var admitted = 0
        public var seenOnce = 0
        /// Of `seenOnce`, those forgotten before `checkOut` because the filter was full (more
        /// new identities within the check-out limit than ``maximumFirstSightings``: a flood).
        public var forgottenEarly = 0
        /// Visits marked as carried by two or more devices at once (``Visit/sharedIdentity``).
        public var sharedIdentities = 0
    }

    enum Phase: UInt8 {
        case free, idle, pending, checkedIn
    }

    /// Everything about one identity that the per-sighting path touches; plain data, so reading
    /// and writing it back copies no references.
    struct Slot {
        var generation: UInt32 = 0
        /// Sightings and samples of the open visit (saturating): what makes room last.
        var seen: UInt32 = 0
        var kind: PayloadKind
        var phase = Phase.idle
        /// Changed since the last `.updated` report (checked-in visits only).
        var dirty = false
        /// The open visit's identity was carried by two devices at once (``Visit/sharedIdentity``).
        var shared = false
        /// The device (a tag of its Bluetooth target) the open visit was last sighted from; 0
        /// when not known. See ``record(_:time:rssi:carrier:)``.
        var carrier: UInt32 = 0
        var first = 0.0
        var last = 0.0
        var samples = 0
        var rssiMax = 0
        var rssiSum = 0
        /// Last sighting of this identity's previous visit: later samples never reach back past it.
        var endedAt = -Double.infinity
        /// `endedAt` before the previous visit ended, and whether that visit was checked in: what
        /// a reopened visit needs back.
        var priorEnd = -Double.infinity
        var endedCheckedIn = false
        /// When the slot went idle; NaN until the next `advance` sees it idle.
        var idleSince = Double.nan
        /// When the open visit was resumed after a restart (``resume(_:now:)``); -∞ otherwise.
        /// The time from its last sighting on disk to the restart is not known absence (the node
        /// was off, or had not written its latest sightings): the check-out limit counts from
        /// the later of the two.
        var resumedAt = -Double.infinity

        /// Since when the open visit counts as unseen.
        var unseenSince: Double { max(last, resumedAt) }
    }

    struct Identity: Hashable {
        var kind: PayloadKind
        var payload: [UInt8]

        /// The payload's bytes in one go (an array hashes element by element, and the kind would
        /// hash its raw value, a string). Equality still tells kinds apart; payloads of two kinds
        /// with the same bytes share a hash, which costs nothing.
        func hash(into hasher: inout Hasher) {
            payload.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    public let checkIn: Double
    public let checkOut: Double
    public let minRSSI: Int?
    public let maxVisit: Double
    /// How long an identity without an open visit keeps its key before its slot is reused: long
    /// enough for measurements a late payload read attributes to it (see
    /// ``attribute(_:to:)``). Identities whose payload comes in every advert (GAEN, advert
    /// protocols) are never attributed anything late, and each GAEN phone brings a new one about
    /// every 15 minutes: theirs go after the check-out limit (or this, if shorter).
    public let keyLifetime: Double
    /// At most this many identities hold a key, checked-in visits aside. A key is taken by an
    /// identity seen twice within the check-out limit (or registered with
    /// ``key(for:payload:metadata:)``), and kept for minutes (a GAEN identifier ten: pending,
    /// walk-past, idle), so adverts repeating random identifiers would otherwise grow the
    /// tracker without bound. When full, a new identity takes room freed in one go, an eighth
    /// of the limit: identities without an open visit first, longest idle first, then pending
    /// visits (not yet checked in), the least seen first and of those the newest first, which
    /// end as walk-pasts: a phone seen for a while outlasts identifiers just admitted. A
    /// checked-in visit is never dropped; a phone whose key went is registered again at its
    /// next sighting (``record(_:time:rssi:)`` returns false).
    public let maximumIdentities: Int
    /// At most this many first sightings wait in the filter (``FirstSightings``): 786,432 by
    /// default, 16 MiB at most, which at 6,000 new identifiers a second still remembers each
    /// for 131 s.
    public var maximumFirstSightings: Int { firstSightings.maximumCapacity }
    public static let defaultMaximumFirstSightings = FirstSightings.defaultMaximumCapacity

    var slots: [Slot] = []
    /// When the identities reach this many, the next new one makes room again (at least an
    /// eighth of the limit later, so checked-in visits filling the tracker cost no pass per key).
    var nextRoom = 0
    /// By slot, when ``advance(to:)`` next needs to look at it (its open visit may have gone
    /// unseen for longer than the check-out limit, its idle key may have outlived its lifetime):
    /// never later than that, sometimes earlier (a sighting since only makes it later; the slot
    /// is then looked at once for nothing). A tick reads these 8 bytes a slot, not the slots: in
    /// a GAEN crowd or flood the tracker holds an identity per identifier for ten minutes.
    var lookAt: [Double] = []
    var payloads: [[UInt8]] = []
    /// By slot, what was heard with the identity but is not part of it (GAEN's metadata).
    var metadata: [[UInt8]?] = []
    var index: [Identity: UInt32] = [:]
    var freeSlots: [UInt32] = []
    var changes: [VisitChange] = []
    var dirtySlots: [UInt32] = []
    /// First sightings of identities without a key (see ``sight(_:payload:metadata:time:rssi:)``).
    var firstSightings: FirstSightings
    /// By slot, the devices an open visit was sighted from lately, for the slots whose sightings
    /// switched device at least once (``CarrierHistory``): few, as one phone switches only when
    /// its address rotates.
    var carrierHistory: [UInt32: CarrierHistory] = [:]
    /// The latest time ``advance(to:)`` was given.
    var clock = -Double.infinity

    public internal(set) var counters = Counters()
    /// Visits currently open (pending or checked in).
    public internal(set) var openVisitCount = 0

    public init(
        settings: DiarySettings, keyLifetime: Double = 3600, maximumIdentities: Int = 65_536,
        maximumFirstSightings: Int = PresenceTracker.defaultMaximumFirstSightings
    ) {
        checkIn = settings.checkInSeconds
        checkOut = settings.checkOutSeconds
        minRSSI = settings.minRSSI
        maxVisit = settings.maxVisitSeconds
        self.keyLifetime = keyLifetime
        self.maximumIdentities = maximumIdentities
        firstSightings = FirstSightings(maximumCapacity: maximumFirstSightings)
    }

    /// Identities that currently hold a key.
    public var trackedIdentities: Int { index.count }
    /// Identities seen once and remembered, not tracked (see ``Counters/firstSightings``).
    public var firstSightingsHeld: Int { firstSightings.live }
    /// Bytes the filter of first sightings holds now, and at most.
    public var firstSightingBytes: Int { firstSightings.bytes }
    public var maximumFirstSightingBytes: Int { FirstSightings.maximumBytes(capacity: firstSightings.maximumCapacity) }

    // MARK: Input

    /// The key for an identity, registering it on first use. `metadata` is what was heard with
    /// the payload but is not its identity (a GAEN identifier's 4 bytes of encrypted metadata):
    /// kept from the first time it is given and stored with the identity's visits.
    ///
    /// It admits the identity whatever the filter of first sightings says (a payload read, a
    /// resumed visit): a first sighting the filter held becomes its open visit.
    public mutating func key(for kind: PayloadKind, payload: [UInt8], metadata: [UInt8]? = nil) -> VisitKey {
        let identity = Identity(kind: kind, payload: payload)
        if let slot = index[identity] {
            if let metadata, self.metadata[Int(slot)] == nil { self.metadata[Int(slot)] = metadata }
            return VisitKey(slot: slot, generation: slots[Int(slot)].generation)
        }
        let key = register(identity, metadata: metadata)
        restoreFirstSighting(Int(key.slot))
        return key
    }

    /// A slot for an identity without one (making room when the tracker is full).
    mutating func register(_ identity: Identity, metadata: [UInt8]?) -> VisitKey {
        let kind = identity.kind
        let payload = identity.payload
        if index.count >= max(maximumIdentities, nextRoom) { makeRoom() }
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
            let generation = slots[Int(slot)].generation
            slots[Int(slot)] = Slot(generation: generation, kind: kind)
            lookAt[Int(slot)] = -.infinity
            payloads[Int(slot)] = payload
            self.metadata[Int(slot)] = metadata
        } else {
            slot = UInt32(slots.count)
            slots.append(Slot(kind: kind))
            lookAt.append(-.infinity)
            payloads.append(payload)
            self.metadata.append(metadata)
        }
        index[identity] = slot
        return VisitKey(slot: slot, generation: slots[Int(slot)].generation)
    }

    /// Records one sighting of a registered identity; `rssi` nil is presence without a
    /// measurement. Returns false when the key has been released (register the payload again);
    /// weak sightings return true and are ignored.
    ///
    /// `carrier` tags the device the sighting came from (the node's Bluetooth target; 0 when not
    /// known, as in a replayed file). An identity whose sightings go back and forth between
    /// devices within ``sharedWindow`` marks its visit ``Visit/sharedIdentity`` (see
    /// ``CarrierHistory``); one device whose address rotates moves on once and never back.
    @discardableResult
    public mutating func record(_ key: VisitKey, time: Double, rssi: Int?, carrier: UInt32 = 0) -> Bool {
        guard let i = liveSlot(key) else {
            counters.staleKeys += 1
            return false
        }
        if let minRSSI, let rssi, rssi < minRSSI {
            counters.ignoredWeak += 1
            return true
        }
        guard time.isFinite else {
            counters.droppedSamples += 1
            return true
        }
        let previous = slots[i].last
        let continuing = (slots[i].phase == .pending || slots[i].phase == .checkedIn) && time - previous <= checkOut
        observe(i, time: time, rssi: rssi)
        if carrier != 0 { noteCarrier(i, carrier, time: time, previousSighting: continuing ? previous : nil) }
        return true
    }

    /// Records a sighting by value (the replay path), through admission: see
    /// ``sight(_:payload:metadata:time:rssi:)``.
    public mutating func record(_ sighting: Sighting) {
        _ = sight(sighting.kind, payload: sighting.payload, metadata: sighting.metadata, time: sighting.time, rssi: sighting.rssi)
    }

    /// Folds RSSI measured before the payload was known into the identity's visits.
    ///
    /// Samples up to the open visit's last sighting join that visit; samples before its first
    /// sighting extend it backwards while each is within `checkOut` of the visit's (growing)
    /// start, not inside the identity's previous visit, and the visit stays shorter than
    /// `maxVisit`. Later samples are recorded as ordinary sightings. Without an open visit,
    /// samples after the previous visit's end are recorded in time order; when the first of them
    /// comes within `checkOut` of that end, the previous visit was never really over and is
    /// reopened (``VisitChange/Event/reopened``) rather than split in two. Dropped samples are
    /// counted in ``Counters/droppedSamples``. Returns false when the key has been released.
    @discardableResult
    public mutating func attribute(_ samples: [RSSISample], to key: VisitKey) -> Bool {
        guard let i = liveSlot(key) else {
            counters.staleKeys += 1
            return false
        }
        var usable: [RSSISample] = []
        usable.reserveCapacity(samples.count)
        for sample in samples {
            if let minRSSI, let rssi = sample.rssi, rssi < minRSSI {
                counters.ignoredWeak += 1
            } else if !sample.time.isFinite {
                counters.droppedSamples += 1
            } else {
                usable.append(sample)
            }
        }
        usable.sort { $0.time < $1.time }

        var s = slots[i]
        if s.phase == .idle {
            let next = usable.partitioningIndex { $0.time > s.endedAt }
            if next < usable.count, usable[next].time - s.endedAt <= checkOut, usable[next].time - s.first < maxVisit {
                reopen(i, &s)
                slots[i] = s
            }
        }
        var later = usable[...]
        if s.phase == .pending || s.phase == .checkedIn {
            let end = usable.partitioningIndex { $0.time > s.last }
            later = usable[end...]
            if end > 0 {
                for sample in usable[..<end].reversed() where !foldEarlier(&s, time: sample.time, rssi: sample.rssi) {
                    counters.droppedSamples += 1
                }
                grew(i, &s)
                slots[i] = s
            }
        } else {
            let start = usable.partitioningIndex { $0.time > s.endedAt }
            counters.droppedSamples += start
            later = usable[start...]
        }
        for sample in later {
            observe(i, time: sample.time, rssi: sample.rssi)
        }
        return true
    }

    /// Closes every visit unseen for more than `checkOut` before `now`, releases keys idle
    /// for longer than ``keyLifetime`` and forgets first sightings more than `checkOut` old.
    /// The owner calls it on a clock tick.
    public mutating func advance(to now: Double) {
        clock = max(clock, now)
        forgetFirstSightings(at: now)
        for i in lookAt.indices where lookAt[i] <= now {
            switch slots[i].phase {
            case .pending, .checkedIn:
                if now - slots[i].unseenSince > checkOut {
                    var s = slots[i]
                    end(i, &s, idleSince: now)
                    slots[i] = s
                }
            case .idle:
                if slots[i].idleSince.isNaN {
                    slots[i].idleSince = now
                } else if now - slots[i].idleSince > lifetime(slots[i].kind) {
                    release(i)
                }
            case .free:
                break
            }
            lookAt[i] = nextLook(slots[i])
        }
    }

    /// When ``advance(to:)`` may next have something to do for a slot, a millisecond early so
    /// that rounding never makes it late.
    func nextLook(_ s: Slot) -> Double {
        switch s.phase {
        case .pending, .checkedIn: s.unseenSince + checkOut - 0.001
        case .idle: s.idleSince.isNaN ? -.infinity : s.idleSince + lifetime(s.kind) - 0.001
        case .free: .infinity
        }
    }

    /// The slot's state changed so that ``advance(to:)`` may have something to do sooner.
    mutating func lookSooner(_ i: Int, _ s: Slot) {
        lookAt[i] = min(lookAt[i], nextLook(s))
    }

    /// Closes every open visit at its last sighting, as if time ran on past the check-out limit
    /// (the end of a replayed file).
    /// First sightings waiting for a second are forgotten (walk-pasts of one sighting).
    public mutating func closeAll() {
        for i in slots.indices where slots[i].phase == .pending || slots[i].phase == .checkedIn {
            var s = slots[i]
            end(i, &s, idleSince: s.last)
            slots[i] = s
        }
        counters.seenOnce += firstSightings.removeAll()
    }

    /// Continues a checked-in visit read back from the diary after a restart at `now`, so the
    /// restart does not split it: seen again within the check-out limit of `now`, it goes on;
    /// unseen, it is closed at its last sighting. Returns nil when the identity already has an
    /// open visit.
    public mutating func resume(_ visit: Visit, now: Double) -> VisitKey? {
        let identity = Identity(kind: visit.kind, payload: visit.payload)
        let key = index[identity].map { VisitKey(slot: $0, generation: slots[Int($0)].generation) } ?? register(identity, metadata: nil)
        let i = Int(key.slot)
        guard slots[i].phase == .idle else { return nil }
        slots[i].phase = .checkedIn
        slots[i].dirty = false
        slots[i].first = visit.checkIn
        slots[i].last = visit.lastSeen
        slots[i].samples = visit.samples
        slots[i].rssiMax = visit.rssiMax
        slots[i].rssiSum = visit.rssiSum
        slots[i].resumedAt = now
        lookSooner(i, slots[i])
        openVisitCount += 1
        return key
    }

    /// Moves every time the tracker holds by `step` seconds: the wall clock they were taken from
    /// has just been synchronised (see ``DiaryClock``), so visits continue instead of ending at
    /// the jump. Take the changes first; times in untaken changes move too.
    public mutating func shiftTimes(by step: Double) {
        guard step != 0, step.isFinite else { return }
        clock += step
        firstSightings.shiftTimes(by: step)
        for i in slots.indices where slots[i].phase != .free {
            lookAt[i] = -.infinity
            slots[i].first += step
            slots[i].last += step
            slots[i].endedAt += step
            slots[i].priorEnd += step
            if !slots[i].idleSince.isNaN { slots[i].idleSince += step }
            slots[i].resumedAt += step
        }
        for j in changes.indices {
            changes[j].visit.checkIn += step
            changes[j].visit.lastSeen += step
            if let checkOut = changes[j].visit.checkOut { changes[j].visit.checkOut = checkOut + step }
        }
    }

    // MARK: Output

    /// Takes the changes collected since the last call, oldest first. With `includingUpdates`,
    /// an `.updated` change is appended for every checked-in open visit that changed since it
    /// was last reported (the owner asks for these when it flushes).
    public mutating func takeChanges(includingUpdates: Bool) -> [VisitChange] {
        if includingUpdates {
            for slot in dirtySlots {
                let i = Int(slot)
                guard slots[i].phase == .checkedIn, slots[i].dirty else { continue }
                slots[i].dirty = false
                changes.append(VisitChange(event: .updated, key: key(of: i), visit: visit(of: i, slots[i], checkOut: nil)))
            }
            dirtySlots.removeAll(keepingCapacity: true)
        }
        var taken: [VisitChange] = []
        swap(&taken, &changes)
        return taken
    }

    /// Whether changes wait to be taken (updates of open visits aside).
    public var hasChanges: Bool { !changes.isEmpty }

    /// The identity's open visit, if it has one.
    public func openVisit(_ key: VisitKey) -> Visit? {
        guard let i = liveSlot(key), slots[i].phase == .pending || slots[i].phase == .checkedIn else { return nil }
        return visit(of: i, slots[i], checkOut: nil)
    }

    /// Whether the identity's open visit is checked in.
    public func isCheckedIn(_ key: VisitKey) -> Bool {
        guard let i = liveSlot(key) else { return false }
        return slots[i].phase == .checkedIn
    }
}

extension Array {
    /// The first index whose element satisfies `predicate`, for an array partitioned so that
    /// all elements failing it come first (binary search).
    fileprivate func partitioningIndex(where predicate: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if predicate(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
