/// One identity on two devices at once: the tracker's check that a visit is one phone.
///
/// A visit's sightings normally come from one device. When its address rotates (every ~15
/// minutes) the node sees a new Bluetooth target and the sightings move on to it, once, never
/// back. Two devices carrying the same identifier at once (a placeholder the tracker was not
/// told about, a cloned or replayed identifier, a phone and its relay) make the sightings go
/// back and forth. The tracker keeps, per open visit, the device it was last sighted from
/// (``Slot/carrier``, 4 bytes) and, only for visits whose device changed, the last few devices
/// and when each was last heard (``CarrierHistory``). A return to a device heard within
/// ``sharedWindow`` counts; ``sharedReturns`` of them in one visit mark it
/// ``Visit/sharedIdentity``. Marking never splits or drops a visit: it says the visit may be
/// several people.
extension PresenceTracker {
    /// A device heard this recently (seconds) is still present: a return to it counts.
    public static let sharedWindow: Double = 60
    /// Returns to an earlier device within one visit that mark it shared. Two, so that one
    /// late advert from a rotated-away address (one return) is not enough.
    public static let sharedReturns = 2

    /// The devices an open visit was last sighted from.
    struct CarrierHistory {
        struct Entry {
            var carrier: UInt32
            var last: Double
        }
        /// The devices left (the current one is ``Slot/carrier``), oldest first, at most
        /// ``capacity``.
        var left: [Entry] = []
        var returns = 0
        static let capacity = 4

        /// `carrier` was last heard at `last` before the sightings moved to another device.
        mutating func leave(_ carrier: UInt32, at last: Double) {
            left.removeAll { $0.carrier == carrier }
            if left.count == Self.capacity { left.removeFirst() }
            left.append(Entry(carrier: carrier, last: last))
        }

        /// Whether the sightings come back to a device heard within `window` before `time`
        /// (taking it off the list: it is the current device again).
        mutating func returns(to carrier: UInt32, at time: Double, window: Double) -> Bool {
            guard let k = left.firstIndex(where: { $0.carrier == carrier }) else { return false }
            let recent = time - left[k].last <= window
            left.remove(at: k)
            return recent
        }
    }

    /// After a sighting from `carrier` was folded into slot `i`'s visit. `previousSighting` is
    /// the visit's last sighting before it, nil when this sighting opened a new visit.
    mutating func noteCarrier(_ i: Int, _ carrier: UInt32, time: Double, previousSighting: Double?) {
        let slot = UInt32(i)
        let current = slots[i].carrier
        guard let previousSighting, current != 0 else {
            slots[i].carrier = carrier
            if previousSighting == nil { carrierHistory[slot] = nil }
            return
        }
        guard current != carrier else { return }
        var history = carrierHistory[slot] ?? CarrierHistory()
        history.leave(current, at: previousSighting)
        if history.returns(to: carrier, at: time, window: Self.sharedWindow) {
            history.returns += 1
        }
        slots[i].carrier = carrier
        if history.returns >= Self.sharedReturns, !slots[i].shared, slots[i].phase == .pending || slots[i].phase == .checkedIn {
            slots[i].shared = true
            counters.sharedIdentities += 1
        }
        carrierHistory[slot] = history
    }

    /// A new visit starts from no device.
    @inline(__always)
    mutating func forgetCarriers(_ i: Int) {
        if !carrierHistory.isEmpty { carrierHistory[UInt32(i)] = nil }
    }
}
