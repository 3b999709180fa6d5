import Sightings
import VenueDiary

/// One visit's state as a node sends it to the venue hub: the node's diary row and the change
/// number its latest write got.
///
/// A node's diary numbers every write to a visit (check-in, a checkpoint of an open visit,
/// check-out, a clock correction) with a change number from one counter that only grows and is
/// never reused (``DiaryStore/changes(after:limit:)``). The hub keys a visit by
/// (node, diary id, `visitID`) and keeps the state with the highest `change`: an older state
/// arriving after a newer one never overwrites it.
public struct ReplicatedVisit: Sendable, Equatable {
    /// The node's diary row id (the node export's `visit_id`).
    public var visitID: Int64
    /// The change number of this state: the version the hub compares.
    public var change: Int64
    public var kind: PayloadKind
    public var payload: [UInt8]
    public var metadata: [UInt8]?
    public var checkIn: Double
    public var lastSeen: Double
    /// Nil while the visit is open (a checkpoint).
    public var checkOut: Double?
    public var samples: Int
    public var rssiMax: Int
    public var rssiSum: Int
    /// Recorded on an unsynchronised clock that could not be corrected.
    public var clockUncorrected: Bool
    /// Two or more devices carried the identity at once (``VenueDiary/Visit/sharedIdentity``).
    public var sharedIdentity: Bool

    public init(
        visitID: Int64, change: Int64, kind: PayloadKind, payload: [UInt8], metadata: [UInt8]? = nil,
        checkIn: Double, lastSeen: Double, checkOut: Double?, samples: Int, rssiMax: Int, rssiSum: Int,
        clockUncorrected: Bool = false, sharedIdentity: Bool = false
    ) {
        self.visitID = visitID
        self.change = change
        self.kind = kind
        self.payload = payload
        self.metadata = metadata
        self.checkIn = checkIn
        self.lastSeen = lastSeen
        self.checkOut = checkOut
        self.samples = samples
        self.rssiMax = rssiMax
        self.rssiSum = rssiSum
        self.clockUncorrected = clockUncorrected
        self.sharedIdentity = sharedIdentity
    }

    /// The state as a ``Visit`` (its id the node's row id).
    public var visit: Visit {
        Visit(
            id: visitID, kind: kind, payload: payload, checkIn: checkIn, lastSeen: lastSeen, checkOut: checkOut,
            samples: samples, rssiMax: rssiMax, rssiSum: rssiSum, clockUncorrected: clockUncorrected,
            metadata: metadata, sharedIdentity: sharedIdentity)
    }
}
