/// The identity limit (``PresenceTracker/maximumIdentities``): room freed in one go when the
/// tracker is full, and a slot released for reuse.
extension PresenceTracker {
    /// Frees an eighth of ``maximumIdentities`` (see there): one pass over the slots every so
    /// many new identities, a few slot reads per identity. Idle keys go first, longest idle
    /// first; then pending visits, the least seen first and, among those seen as often, the
    /// newest first (an identifier just admitted is worth less than a phone seen for minutes).
    mutating func makeRoom() {
        var idle: [(since: Double, slot: Int)] = []
        var pending: [(seen: UInt32, first: Double, slot: Int)] = []
        for i in slots.indices {
            switch slots[i].phase {
            case .idle: idle.append((slots[i].idleSince.isNaN ? -.infinity : slots[i].idleSince, i))
            case .pending: pending.append((slots[i].seen, slots[i].first, i))
            case .checkedIn, .free: break
            }
        }
        let room = max(1, maximumIdentities / 8)
        idle.sort { $0.since < $1.since }
        let idleFreed = min(room, idle.count)
        for (_, i) in idle.prefix(idleFreed) { release(i) }
        let pendingEnded = min(room - idleFreed, pending.count)
        if pendingEnded > 0 {
            pending.sort {
                $0.seen != $1.seen ? $0.seen < $1.seen : $0.first != $1.first ? $0.first > $1.first : $0.slot > $1.slot
            }
            for (_, _, i) in pending.prefix(pendingEnded) {
                var s = slots[i]
                end(i, &s, idleSince: s.last)
                slots[i] = s
                release(i)
            }
        }
        counters.identitiesEvicted += idleFreed + pendingEnded
        counters.pendingVisitsEnded += pendingEnded
        nextRoom = index.count + room
    }

    mutating func release(_ i: Int) {
        index.removeValue(forKey: Identity(kind: slots[i].kind, payload: payloads[i]))
        payloads[i] = []
        metadata[i] = nil
        carrierHistory[UInt32(i)] = nil
        slots[i].phase = .free
        slots[i].generation &+= 1
        lookAt[i] = .infinity
        freeSlots.append(UInt32(i))
    }
}
