import Sightings

/// One visit: a phone payload present at the venue from its first to its last sighting.
///
/// Times are wall-clock Unix seconds. The tracker produces visits without an `id`; the diary
/// gives each stored visit a row id that is never reused (it is the export's `visit_id`).
public struct Visit: Sendable, Equatable {
    /// The diary's row id; nil until the visit is stored.
    public var id: Int64?
    public var kind: PayloadKind
    public var payload: [UInt8]
    /// The first sighting (the check-in time shown in exports).
    public var checkIn: Double
    /// The latest sighting so far.
    public var lastSeen: Double
    /// The check-out time (the last sighting of a finished visit); nil while the visit is open.
    public var checkOut: Double?
    /// RSSI measurements folded into this visit. Sightings without a measurement (a controller
    /// that cannot measure, a phone writing to us) extend the visit but are not counted here, so
    /// a visit can have 0 samples; its RSSI statistics are then unknown.
    public var samples: Int
    /// Strongest RSSI measured, dBm (meaningless when `samples` is 0).
    public var rssiMax: Int
    /// Sum of all RSSI values, dBm, so that the mean stays exact when samples are added later.
    public var rssiSum: Int
    /// Whether the visit's times come from a system clock that was not synchronised and could
    /// not (yet) be corrected: the diary stores it, the tracker never sets it. See
    /// ``DiaryClock``.
    public var clockUncorrected: Bool
    /// For kind `gaen`: the 4 bytes of Associated Encrypted Metadata heard with the identifier
    /// (nil when not heard, and in visits recorded before the diary kept it).
    public var metadata: [UInt8]?
    /// Whether the identity was carried by two or more devices at once during the visit (its
    /// sightings came from two Bluetooth targets in turn): the visit may be several people, not
    /// one. Marked by the tracker (see ``PresenceTracker``), kept by the diary and shown by
    /// exports as `shared_identifier`.
    public var sharedIdentity: Bool

    public init(
        id: Int64? = nil, kind: PayloadKind, payload: [UInt8], checkIn: Double, lastSeen: Double,
        checkOut: Double? = nil, samples: Int, rssiMax: Int, rssiSum: Int, clockUncorrected: Bool = false,
        metadata: [UInt8]? = nil, sharedIdentity: Bool = false
    ) {
        self.clockUncorrected = clockUncorrected
        self.sharedIdentity = sharedIdentity
        self.metadata = metadata
        self.id = id
        self.kind = kind
        self.payload = payload
        self.checkIn = checkIn
        self.lastSeen = lastSeen
        self.checkOut = checkOut
        self.samples = samples
        self.rssiMax = rssiMax
        self.rssiSum = rssiSum
    }

    /// Mean RSSI in dBm (0 for a visit without samples).
    public var rssiMean: Double {
        samples > 0 ? Double(rssiSum) / Double(samples) : 0
    }

    /// Whether the visit has been checked out.
    public var isOpen: Bool { checkOut == nil }
}

/// One sighting of a payload: what the Bluetooth layer reports once it knows who it saw.
/// Not built on ``RSSISample`` (time and RSSI only): a sighting is the diary's row, with kind, payload and metadata.
public struct Sighting: Sendable, Equatable {
    /// Wall-clock Unix seconds.
    public var time: Double
    public var kind: PayloadKind
    public var payload: [UInt8]
    /// Received signal strength, dBm; nil when it was not measured (a controller that reports
    /// no RSSI, a phone that wrote to the node): presence all the same.
    public var rssi: Int?
    /// For kind `gaen`: the 4 bytes of Associated Encrypted Metadata sent with the identifier.
    public var metadata: [UInt8]?

    public init(time: Double, kind: PayloadKind, payload: [UInt8], rssi: Int?, metadata: [UInt8]? = nil) {
        self.time = time
        self.kind = kind
        self.payload = payload
        self.rssi = rssi
        self.metadata = metadata
    }
}
