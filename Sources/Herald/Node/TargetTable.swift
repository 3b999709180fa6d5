import BLEHost

/// The targets the node follows, found by their current address and by their pseudo device
/// address (which survives an Android phone's address rotation).
///
/// The clock tick never walks the whole table (in a crowd it holds tens of thousands of targets,
/// and a million in `advert-bench`'s distinct stream): the table keeps, beside the records, what
/// the tick needs to look at — the sessions, the targets heard within the connection recency
/// that may be due a connection, and its targets by when they were last seen, for forgetting.
/// All of it changes only through the table's methods, so it stays in step with the records.
struct TargetTable: Sendable {
    let configuration: NodeConfiguration
    /// Records by slot. A target's id names its slot (low 32 bits: slot + 1) and the slot's
    /// generation (high 32 bits), so finding a record costs no hashing, and a slot used again
    /// gives ids no earlier target had. (A dictionary by id hashed the id on every advert and
    /// doubled its storage as a crowd grew: 3.7 MB for 11,000 targets, 1.7 MB now.) A free
    /// slot keeps its forgotten record, buffers released, which no id finds (its generation has
    /// moved on): records are not optionals, whose destruction went through the runtime's
    /// generic value witnesses (400 instructions a record, a tenth of an advert flood's time).
    private var slots: [TargetRecord] = []
    /// Each slot's generation, raised when its target is forgotten: an id of the slot's earlier
    /// target finds nothing.
    private var generations: [UInt32] = []
    private var freeSlots: [Int] = []
    /// Targets followed.
    var count: Int { slots.count - freeSlots.count }
    /// The node's connections, by target: a handful (the connection quota), out of the records
    /// (most targets never have one).
    var sessions: [TargetID: TargetRecord.Session] = [:]
    /// Targets by current address and by pseudo device address.
    private var index = TargetIndex()
    /// Targets that may be due a connection (``TargetRecord/mayConnect(_:)``), added when heard
    /// and dropped by ``forEachRecent(now:_:)`` once not heard within the connection recency or
    /// no longer able to be due (``TargetRecord/listedRecent`` says who is in).
    private var recent: [TargetID] = []
    /// How many targets ``forEachRecent(now:_:)`` may visit (an upper bound).
    var recentCount: Int { recent.count }
    /// Targets whose payload comes in their adverts, and all others: forgotten after different
    /// intervals (``NodeConfiguration/advertTargetCleanInterval``).
    private var advertTargets = LastSeenQueue()
    private var otherTargets = LastSeenQueue()

    init(configuration: NodeConfiguration) {
        self.configuration = configuration
    }

    /// The slot of a target still followed.
    private func slot(of id: TargetID) -> Int? {
        let low = id.rawValue & 0xFFFF_FFFF
        guard low > 0, low <= UInt64(slots.count) else { return nil }
        let slot = Int(low - 1)
        return generations[slot] == UInt32(truncatingIfNeeded: id.rawValue >> 32) ? slot : nil
    }

    /// A copy of a followed target's record (changes go through ``update(_:_:)``).
    subscript(id: TargetID) -> TargetRecord? {
        slot(of: id).map { slots[$0] }
    }

    /// A followed target's identity, read in place (``subscript(_:)`` copies the whole record,
    /// retaining its buffers, to read one field).
    func target(_ id: TargetID) -> Target? {
        guard let slot = slot(of: id) else { return nil }
        return slots[slot].target
    }

    /// When a followed target was last seen and its source (what the forgetting queues need),
    /// read in place: a copy of the record would retain its buffers, which in a large table are
    /// cache misses.
    private func seen(_ id: TargetID) -> (lastSeen: Double, source: TargetRecord.Source)? {
        guard let slot = slot(of: id) else { return nil }
        return (slots[slot].lastSeen, slots[slot].source)
    }

    /// Every record by id: for tests and checks (it builds a dictionary).
    var records: [TargetID: TargetRecord] {
        Dictionary(uniqueKeysWithValues: slots.lazy.filter { slot(of: $0.target.id) != nil }.map { ($0.target.id, $0) })
    }

    /// Changes a record in place with one lookup: the only way to change one (reading through
    /// ``subscript(_:)`` copies the whole record). Not for what the table keeps in step: when
    /// it was last seen (``sight(_:now:_:)``) and its source (``raiseSource(_:to:)``).
    mutating func update<R>(_ id: TargetID, _ body: (inout TargetRecord) -> R) -> R? {
        guard let slot = slot(of: id) else { return nil }
        return body(&slots[slot])
    }

    /// A sighting of the target at `now`: marks it seen, then changes it in place with `body`;
    /// one that may now be due a connection joins the recent list.
    mutating func sight<R>(_ id: TargetID, now: Double, _ body: (inout TargetRecord) -> R) -> R? {
        guard let slot = slot(of: id) else { return nil }
        let (result, joins) = Self.sight(&slots[slot], now: now, configuration: configuration, body)
        if joins { recent.append(id) }
        return result
    }

    private static func sight<R>(
        _ record: inout TargetRecord, now: Double, configuration: NodeConfiguration, _ body: (inout TargetRecord) -> R
    ) -> (R, Bool) {
        record.lastSeen = now
        let result = body(&record)
        guard !record.listedRecent, record.mayConnect(configuration) else { return (result, false) }
        record.listedRecent = true
        return (result, true)
    }

    /// What a device shows can only make it more certain of its kind (see ``TargetRecord/Source``).
    mutating func raiseSource(_ id: TargetID, to source: TargetRecord.Source) {
        let raised = update(id) { record -> Bool in
            guard record.source < source else { return false }
            record.source = source
            return true
        }
        // Now forgotten after the advert interval: an entry in that queue too (the other one
        // finds it gone or pushes it there again).
        if raised == true, source == .advert, let seen = seen(id)?.lastSeen { advertTargets.push(id, seen: seen) }
    }

    /// Visits in place each target heard within the connection recency that may be due a
    /// connection and has no session, dropping from the list those no longer heard or no longer
    /// able to be due (a sighting adds them again). A target with a session stays listed: how
    /// the session ends changes what it may be due.
    mutating func forEachRecent(now: Double, _ body: (borrowing TargetRecord) -> Void) {
        var kept = 0
        let anySession = !sessions.isEmpty
        for k in recent.indices {
            let id = recent[k]
            guard let slot = slot(of: id) else { continue }
            let hasSession = anySession && sessions[id] != nil
            let keep = Self.visitRecent(&slots[slot], hasSession: hasSession, now: now, configuration: configuration, body)
            if keep {
                recent[kept] = id
                kept += 1
            }
        }
        recent.removeLast(recent.count - kept)
    }

    private static func visitRecent(
        _ record: inout TargetRecord, hasSession: Bool, now: Double, configuration: NodeConfiguration, _ body: (borrowing TargetRecord) -> Void
    ) -> Bool {
        guard now - record.lastSeen <= configuration.connectRecency, hasSession || record.mayConnect(configuration) else {
            record.listedRecent = false
            return false
        }
        if !hasSession { body(record) }
        return true
    }

    /// How long a target may go unseen before it is forgotten.
    func cleanInterval(_ source: TargetRecord.Source) -> Double {
        source == .advert ? min(configuration.advertTargetCleanInterval, configuration.peripheralCleanInterval) : configuration.peripheralCleanInterval
    }

    /// Forgets the targets without a session unseen for their clean interval; returns them.
    /// A target with a session is kept until a tick after its session ends.
    mutating func forgetUnseen(now: Double) -> [Target] {
        var forgotten: [Target] = []
        forgetUnseen(now: now, in: \.advertTargets, interval: cleanInterval(.advert), into: &forgotten)
        forgetUnseen(now: now, in: \.otherTargets, interval: cleanInterval(.herald), into: &forgotten)
        return forgotten
    }

    private mutating func forgetUnseen(
        now: Double, in queue: WritableKeyPath<Self, LastSeenQueue>, interval: Double, into forgotten: inout [Target]
    ) {
        var busy = [LastSeenQueue.Entry]()
        while let entry = self[keyPath: queue].pop(where: { now - $0 >= interval }) {
            guard let (lastSeen, source) = seen(entry.id) else { continue }  // forgotten through its other entry
            if now - lastSeen >= cleanInterval(source) {
                if sessions[entry.id] != nil {
                    busy.append(entry)
                } else {
                    if let target = target(entry.id) { forgotten.append(target) }
                    remove(entry.id)
                }
            } else {
                push(entry.id, source: source, seen: lastSeen)
            }
        }
        for entry in busy { self[keyPath: queue].push(entry.id, seen: entry.seen) }
    }

    private mutating func push(_ id: TargetID, source: TargetRecord.Source, seen: Double) {
        if source == .advert { advertTargets.push(id, seen: seen) } else { otherTargets.push(id, seen: seen) }
    }

    func id(address: BluetoothAddress) -> TargetID? { index[.address(address)] }

    /// The target seen at this address or with this pseudo address. A target found by its pseudo
    /// address at a new address moves there: the old address no longer leads to it.
    mutating func find(address: BluetoothAddress, addressType: AddressType, pseudo: PseudoDeviceAddress?) -> TargetID? {
        if let pseudo, let id = index[.pseudo(pseudo)] {
            if let old = target(id)?.address, old != address {
                index.remove(.address(old), ifLeadingTo: id)
                index[.address(address)] = id
                update(id) { record in
                    record.target.address = address
                    record.target.addressType = addressType
                }
            }
            return id
        }
        guard let id = index[.address(address)] else { return nil }
        if let pseudo {
            // First pseudo address for this target, or a new one (Herald renews it when the
            // phone restarts advertising): index it.
            if let old = target(id)?.pseudoAddress { index.remove(.pseudo(old), ifLeadingTo: id) }
            update(id) { $0.target.pseudoAddress = pseudo }
            index[.pseudo(pseudo)] = id
        }
        return id
    }

    /// The table holds ``NodeConfiguration/maximumTargets``: a new target takes the place of
    /// the one heard least recently (``forgetLeastRecent()``).
    var isFull: Bool { count >= configuration.maximumTargets }

    /// Forgets the target heard least recently that has no session, to make room, and returns
    /// it; nil when every target has one. The forgetting queues find it: their oldest entries are looked at
    /// until one is as old as its target's last sighting (an older entry is pushed back with
    /// that time, as ``forgetUnseen(now:)`` does), so a burst of new addresses costs a few queue
    /// steps each, not a walk of the table.
    mutating func forgetLeastRecent() -> Target? {
        var busy: [(advert: Bool, entry: LastSeenQueue.Entry)] = []
        defer {
            for (advert, entry) in busy {
                if advert { advertTargets.push(entry.id, seen: entry.seen) } else { otherTargets.push(entry.id, seen: entry.seen) }
            }
        }
        while true {
            let advert = (advertTargets.oldest?.seen ?? .infinity) <= (otherTargets.oldest?.seen ?? .infinity)
            guard let entry = advert ? advertTargets.pop(where: { _ in true }) : otherTargets.pop(where: { _ in true }) else {
                return nil
            }
            guard let (lastSeen, source) = seen(entry.id) else { continue }  // forgotten through its other entry
            if lastSeen > entry.seen {
                push(entry.id, source: source, seen: lastSeen)
            } else if sessions[entry.id] != nil {
                busy.append((advert, entry))
            } else {
                let forgotten = target(entry.id)
                remove(entry.id)
                return forgotten
            }
        }
    }

    mutating func insert(address: BluetoothAddress, addressType: AddressType, pseudo: PseudoDeviceAddress?, source: TargetRecord.Source, now: Double) -> TargetID {
        let slot = freeSlots.popLast() ?? slots.count
        if slot == slots.count { generations.append(0) }
        let id = TargetID(rawValue: UInt64(generations[slot]) << 32 | UInt64(slot + 1))
        let record = TargetRecord(target: Target(id: id, address: address, addressType: addressType, pseudoAddress: pseudo), source: source, now: now)
        if slot == slots.count { slots.append(record) } else { slots[slot] = record }
        push(id, source: source, seen: now)
        index[.address(address)] = id
        if let pseudo { index[.pseudo(pseudo)] = id }
        return id
    }

    private mutating func remove(_ id: TargetID) {
        guard let slot = slot(of: id) else { return }
        let target = slots[slot].target
        // The record stays in its slot, which no id finds once its generation moves on; its
        // buffers go now.
        slots[slot].earlier = []
        slots[slot].payload = nil
        generations[slot] &+= 1
        freeSlots.append(slot)
        if !sessions.isEmpty { sessions[id] = nil }
        index.remove(.address(target.address), ifLeadingTo: id)
        if let pseudo = target.pseudoAddress { index.remove(.pseudo(pseudo), ifLeadingTo: id) }
    }
}
