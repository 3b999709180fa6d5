import Sightings

/// Admission: an identity without a key becomes a tracked visit only at its second sighting
/// within the check-out limit, opened at its first (see ``PresenceTracker/sight(_:payload:metadata:time:rssi:)``).
/// Until then its first sighting waits in ``FirstSightings``, 16 bytes and no allocation, so a
/// flood of one-shot identifiers (BLE advert spam) never takes a slot from a phone.
extension PresenceTracker {
    /// A sighting of an identity by value, the measurement path of the node's pipeline: records
    /// it when the identity holds a key and returns the key; otherwise remembers the sighting
    /// (``FirstSightings``) and returns nil, until the identity is seen again within `checkOut`
    /// of it: then it is admitted, its visit opened at that first sighting (time and RSSI, as if
    /// it had been tracked since), this sighting recorded, and its key returned. Weak sightings
    /// of an untracked identity are ignored (nil). `metadata` is kept when the identity is (or
    /// becomes) tracked, as in ``key(for:payload:metadata:)``.
    ///
    /// Neither allocates nor hashes more than twice unless the identity is admitted.
    public mutating func sight(
        _ kind: PayloadKind, payload: [UInt8], metadata: [UInt8]? = nil, time: Double, rssi: Int?
    ) -> VisitKey? {
        let identity = Identity(kind: kind, payload: payload)
        if let slot = index[identity] {
            if let metadata, self.metadata[Int(slot)] == nil { self.metadata[Int(slot)] = metadata }
            let key = VisitKey(slot: slot, generation: slots[Int(slot)].generation)
            record(key, time: time, rssi: rssi)
            return key
        }
        if let minRSSI, let rssi, rssi < minRSSI {
            counters.ignoredWeak += 1
            return nil
        }
        guard time.isFinite else {
            counters.droppedSamples += 1
            return nil
        }
        let hash = FirstSightings.hash(kind, payload)
        if let position = firstSightings.find(hash) {
            let first = firstSightings.entry(at: position)
            firstSightings.take(position, hash: hash)
            if time - first.time <= checkOut, clock - first.time <= checkOut {
                counters.admitted += 1
                let key = register(identity, metadata: metadata)
                let i = Int(key.slot)
                var s = slots[i]
                open(&s, time: first.time, rssi: first.rssi)
                lookSooner(i, s)
                grew(i, &s)
                slots[i] = s
                observe(i, time: time, rssi: rssi)
                return key
            }
            // Seen again, but more than the check-out limit later: the first sighting was a
            // walk-past of its own, and this one starts afresh.
            counters.seenOnce += 1
        }
        remember(hash, time: time, rssi: rssi)
        return nil
    }

    /// Puts a first sighting in the filter; when it is full, the oldest entry goes (counted as
    /// forgotten early if it could still have been admitted).
    mutating func remember(_ hash: UInt64, time: Double, rssi: Int?) {
        counters.firstSightings += 1
        if firstSightings.isFull {
            if let oldest = firstSightings.popOldest() {
                counters.seenOnce += 1
                if time - oldest.time <= checkOut { counters.forgottenEarly += 1 }
            }
        }
        firstSightings.insert(hash, time: time, rssi: rssi)
    }

    /// The filter's first sighting of an identity being registered unconditionally (a payload
    /// read, late attribution): its visit so far, as the tracker would have held it.
    mutating func restoreFirstSighting(_ i: Int) {
        guard firstSightings.count > 0 else { return }
        let hash = FirstSightings.hash(slots[i].kind, payloads[i])
        guard let position = firstSightings.find(hash) else { return }
        let first = firstSightings.entry(at: position)
        firstSightings.take(position, hash: hash)
        guard clock - first.time <= checkOut else {
            counters.seenOnce += 1
            return
        }
        counters.admitted += 1
        var s = slots[i]
        open(&s, time: first.time, rssi: first.rssi)
        lookSooner(i, s)
        grew(i, &s)
        slots[i] = s
    }

    /// First sightings forgotten at `now`: those more than `checkOut` old.
    mutating func forgetFirstSightings(at now: Double) {
        counters.seenOnce += firstSightings.expire(now: now, window: checkOut)
    }
}

/// The first sightings of identities the tracker does not hold, each kept until it is more than
/// the check-out limit old or its identity is seen again: a FIFO ring of (64-bit keyed hash of
/// kind and payload, with the RSSI in its low byte; time) in arrival order, and an open-addressed
/// index of ring positions (linear probing, 12 bits of the hash beside each position so that a
/// probe rarely reads the ring; deletion by backward shift, no tombstones).
///
/// Memory: 16 bytes an entry in the ring and 4 an index slot, the index at most 3/4 full:
/// it grows with what it holds, doubling, from 4,096 entries up to ``maximumCapacity``
/// (786,432 by default: 12 MiB of ring and 4 MiB of index, 16 MiB in all), and never shrinks
/// before the tracker's ``PresenceTracker/closeAll()``. When full, the oldest entry makes room:
/// at 6,000 new identifiers a second (a UART's ceiling of adverts) a first sighting is still
/// remembered for 131 s, longer than the gap between the sightings of a phone seen once a
/// minute. The hash is Swift's `Hasher` (seeded per process), so an attacker cannot aim adverts
/// at one probe chain.
struct FirstSightings {
    struct Entry {
        /// The hash with its low byte replaced by the RSSI's (0x80 for none); 0 once taken.
        var key: UInt64
        var time: Double

        var rssi: Int? {
            let byte = Int8(truncatingIfNeeded: key)
            return byte == .min ? nil : Int(byte)
        }
    }

    /// Ring positions have 20 bits in an index slot.
    static let positionBits: UInt32 = 20
    static let positionMask: UInt32 = (1 << positionBits) - 1
    static let initialCapacity = 4096
    static let defaultMaximumCapacity = 786_432

    let maximumCapacity: Int
    private(set) var ring: [Entry] = []
    private var head = 0
    /// Entries in the ring, taken ones included (they leave when they reach the front).
    private(set) var count = 0
    /// Entries still waiting for their identity's second sighting.
    private(set) var live = 0
    private var index: [UInt32] = []
    private var mask = 0

    init(maximumCapacity: Int = Self.defaultMaximumCapacity) {
        precondition(maximumCapacity >= 1 && maximumCapacity < Int(Self.positionMask), "at most 2^20 - 2 first sightings")
        self.maximumCapacity = maximumCapacity
    }

    /// Bytes held by the ring and the index.
    var bytes: Int { ring.count * MemoryLayout<Entry>.stride + index.count * MemoryLayout<UInt32>.stride }

    /// The most ``bytes`` can be.
    static func maximumBytes(capacity: Int) -> Int {
        capacity * MemoryLayout<Entry>.stride + indexSize(capacity) * MemoryLayout<UInt32>.stride
    }

    /// The index for a ring of `capacity`: a power of two at least 4/3 of it.
    static func indexSize(_ capacity: Int) -> Int {
        var size = 8
        while size * 3 < capacity * 4 { size *= 2 }
        return size
    }

    static func hash(_ kind: PayloadKind, _ payload: [UInt8]) -> UInt64 {
        var hasher = Hasher()
        let kindByte: UInt8
        switch kind {
        case .herald: kindByte = 1
        case .gaen: kindByte = 2
        case .opentrace: kindByte = 3
        case .advert: kindByte = 4
        }
        hasher.combine(kindByte)
        payload.withUnsafeBytes { hasher.combine(bytes: $0) }
        // The low byte carries the RSSI; the top bit keeps a live key from ever being 0.
        return UInt64(UInt(bitPattern: hasher.finalize())) & ~0xFF | 1 << 63
    }

    private func home(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash >> 8) & mask }
    private static func tag(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash >> 44) << positionBits }

    /// Whether the next insert must first make room.
    var isFull: Bool { count == maximumCapacity }

    /// The ring position of the hash's live entry.
    func find(_ hash: UInt64) -> Int? {
        guard live > 0 else { return nil }
        let tag = Self.tag(hash)
        var j = home(hash)
        while true {
            let slot = index[j]
            if slot == 0 { return nil }
            if slot & ~Self.positionMask == tag {
                let position = Int(slot & Self.positionMask) - 1
                if ring[position].key & ~0xFF == hash { return position }
            }
            j = (j + 1) & mask
        }
    }

    func entry(at position: Int) -> (time: Double, rssi: Int?) {
        (ring[position].time, ring[position].rssi)
    }

    /// Removes a live entry: its identity was seen again.
    mutating func take(_ position: Int, hash: UInt64) {
        unindex(position, hash: hash)
        ring[position].key = 0
        live -= 1
    }

    /// Adds a first sighting of an identity it does not hold; the caller made room when
    /// ``isFull``. A full ring below the maximum first drops the taken entries at its front,
    /// then grows.
    mutating func insert(_ hash: UInt64, time: Double, rssi: Int?) {
        if count == ring.count {
            while count > 0, ring[head].key == 0 { popFront() }
            if count == ring.count { grow() }
        }
        let position = (head + count) % ring.count
        // −128 is "none"; a measured RSSI is −127…127 dBm (HCI and sightings files alike).
        let rssiByte = UInt64(UInt8(bitPattern: rssi.map { Int8(clamping: max(-127, $0)) } ?? .min))
        ring[position] = Entry(key: hash | rssiByte, time: time)
        count += 1
        live += 1
        var j = home(hash)
        while index[j] != 0 { j = (j + 1) & mask }
        index[j] = Self.tag(hash) | UInt32(position + 1)
    }

    /// Drops the oldest entry to make room; returns it when it was still live.
    mutating func popOldest() -> (time: Double, rssi: Int?)? {
        while count > 0 {
            let oldest = ring[head]
            popFront()
            if oldest.key != 0 { return (oldest.time, oldest.rssi) }
        }
        return nil
    }

    /// Forgets the entries more than `window` older than `now` (and taken ones at the front);
    /// returns how many live ones went.
    mutating func expire(now: Double, window: Double) -> Int {
        var forgotten = 0
        while count > 0, ring[head].key == 0 || now - ring[head].time > window {
            if ring[head].key != 0 { forgotten += 1 }
            popFront()
        }
        return forgotten
    }

    /// Forgets everything and gives the memory back; returns how many live entries went.
    mutating func removeAll() -> Int {
        let forgotten = live
        self = FirstSightings(maximumCapacity: maximumCapacity)
        return forgotten
    }

    /// Moves every time by `step` (the clock was synchronised).
    mutating func shiftTimes(by step: Double) {
        for i in ring.indices where ring[i].key != 0 { ring[i].time += step }
    }

    private mutating func popFront() {
        let key = ring[head].key
        if key != 0 {
            unindex(head, hash: key & ~0xFF)
            live -= 1
        }
        head = (head + 1) % ring.count
        count -= 1
    }

    /// Removes a position from the index, shifting later entries of its probe run back.
    private mutating func unindex(_ position: Int, hash: UInt64) {
        let stored = UInt32(position + 1)
        var hole = home(hash)
        while index[hole] & Self.positionMask != stored { hole = (hole + 1) & mask }
        var j = hole
        while true {
            j = (j + 1) & mask
            let slot = index[j]
            if slot == 0 { break }
            let at = home(ring[Int(slot & Self.positionMask) - 1].key & ~0xFF)
            // An entry whose home lies cyclically in (hole, j] stays where it is.
            let stays = hole <= j ? (hole < at && at <= j) : (hole < at || at <= j)
            if !stays {
                index[hole] = slot
                hole = j
            }
        }
        index[hole] = 0
    }

    /// A larger ring (twice, up to the maximum) with the entries in order from 0, and its index.
    private mutating func grow() {
        let capacity = min(maximumCapacity, max(Self.initialCapacity, ring.count * 2))
        var ring = [Entry](repeating: Entry(key: 0, time: 0), count: capacity)
        for i in 0..<count { ring[i] = self.ring[(head + i) % self.ring.count] }
        self.ring = ring
        head = 0
        index = [UInt32](repeating: 0, count: Self.indexSize(capacity))
        mask = index.count - 1
        for position in 0..<count where ring[position].key != 0 {
            let key = ring[position].key & ~0xFF
            var j = home(key)
            while index[j] != 0 { j = (j + 1) & mask }
            index[j] = Self.tag(key) | UInt32(position + 1)
        }
    }
}
