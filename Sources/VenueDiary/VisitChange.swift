/// A small handle for one (kind, payload) identity in a ``PresenceTracker``: registering the
/// payload once and recording by key keeps the per-sighting path free of hashing and allocation.
///
/// A key stays valid while its identity was seen within the tracker's key lifetime (an hour
/// after its last visit ended, by default); afterwards `record` returns false and the caller
/// registers the payload again.
public struct VisitKey: Hashable, Sendable {
    let slot: UInt32
    let generation: UInt32
}

/// What happened to a visit. The writer turns these into diary rows; the live service also
/// logs check-ins and flashes an LED for them.
public struct VisitChange: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        /// The visit just passed the check-in limit; it is written from now on.
        case checkedIn
        /// A checked-in open visit changed since it was last reported (reported at flushes).
        case updated
        /// A checked-in visit ended; `visit.checkOut` is its last sighting.
        case checkedOut
        /// A visit ended before it was checked in; it is never written.
        case walkPast
        /// A checked-out visit continues: measurements taken before its check-out limit ran out
        /// arrived late (a phone's RSSI measured under an address whose payload became known
        /// only later), so it was never really gone. `visit` is open again with its check-in
        /// kept; one visit, not two.
        case reopened
    }

    public var event: Event
    public var key: VisitKey
    public var visit: Visit

    public init(event: Event, key: VisitKey, visit: Visit) {
        self.event = event
        self.key = key
        self.visit = visit
    }
}
