import BLEHost
import Sightings

/// Everything the node knows about one target.
struct TargetRecord: Sendable {
    /// How the node learns this target's payload.
    enum Source: Int, Comparable, Sendable {
        /// Only known from its writes to our signal characteristic.
        case writer = 0
        /// Apple manufacturer data: maybe an iPhone running Herald in the background.
        case apple = 1
        /// The OpenTrace service in its advert.
        case openTrace = 2
        /// The Herald service in its advert.
        case herald = 3
        /// Its adverts carry the payload (GAEN, a configured advert protocol).
        case advert = 4

        static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// A connection the node asked for, by step.
    enum Phase: Equatable, Sendable {
        case connecting
        case discovering
        case reading
        case sharing
        case disconnecting
    }

    struct Session: Sendable {
        var phase: Phase
        /// When the attempt started, and how long it may take.
        var started: Double
        var attemptTimeout: Double
        /// When the link came up (for the session timeout).
        var connectedAt: Double?
        /// The session did what it was for (payload read, service absent, share written).
        var succeeded = false
    }

    // Stored fields go widest first, so that the small ones pack together: a crowd keeps tens of
    // thousands of records (104 bytes each, 176 before; the table's array of slots pays the
    // stride for every slot, free ones included).
    var target: Target
    var firstSeen: Double
    /// Set only by ``TargetTable`` (insert and ``TargetTable/sight(_:now:_:)``), which keeps its
    /// forgetting queues and its list of recent targets in step with it.
    var lastSeen: Double
    var nextAttemptAt: Double = 0
    /// NaN for never (as stored; ``payloadReadAt`` and ``lastSharedAt`` are the optionals).
    private var readAt = Double.nan
    private var sharedAt = Double.nan
    /// Measurements taken before the payload was known, for attribution once it is; compact
    /// (8 bytes each, not 24): in a crowd most of the node's memory is these buffers.
    var earlier: [BufferedMeasurement] = []
    var payload: SensorPayload?
    var source: Source
    /// In the table's list of recently heard targets that may be due a connection.
    var listedRecent = false
    /// Whether its latest advert accepted connections.
    var connectable = false
    /// Confirmed by service discovery.
    var signal: SignalCharacteristicKind?
    /// Service discovery found no Herald service: never connect again.
    var notHerald = false
    /// Its payload is another venue beacon's, which the node does not report.
    var isVenueBeacon = false
    /// Connection failures in a row (saturating: `maximumConnectionFailures` is far below).
    private var failureCount: UInt8 = 0
    /// `Int8.min` for none (HCI reports RSSI in -127…20).
    private var latestRSSI = Int8.min
    /// Rotates which payloads a share carries when not all fit in one write (wraps).
    private var shareRoundCount: UInt16 = 0

    var payloadReadAt: Double? {
        get { readAt.isNaN ? nil : readAt }
        set { readAt = newValue ?? .nan }
    }

    var lastSharedAt: Double? {
        get { sharedAt.isNaN ? nil : sharedAt }
        set { sharedAt = newValue ?? .nan }
    }

    var failures: Int {
        get { Int(failureCount) }
        set { failureCount = UInt8(clamping: newValue) }
    }

    var shareRound: Int {
        get { Int(shareRoundCount) }
        set { shareRoundCount = UInt16(truncatingIfNeeded: newValue) }
    }

    /// The latest RSSI measured, shared with the payloads (Herald writes the target's RSSI).
    var lastRSSI: Int? {
        get { latestRSSI == .min ? nil : Int(latestRSSI) }
        set { latestRSSI = newValue.map { Int8(clamping: $0) } ?? .min }
    }

    /// The buffered measurements as events carry them.
    var earlierMeasurements: [RSSISample] { earlier.map { $0.measurement(since: firstSeen) } }

    init(target: Target, source: Source, now: Double) {
        self.target = target
        self.source = source
        self.firstSeen = now
        self.lastSeen = now
    }

    var isIPhone: Bool { signal == .ios }

    /// Takes a measurement: kept for attribution while the payload is unknown. Nil for a target
    /// the node does not report (another venue beacon, an Apple device without Herald).
    mutating func measure(rssi: Int?, now: Double, limit: Int) -> (target: Target, payload: SensorPayload?, isIPhone: Bool)? {
        guard !isVenueBeacon, !notHerald else { return nil }
        if rssi != nil { lastRSSI = rssi }
        if payload == nil { buffer(BufferedMeasurement(time: now, rssi: rssi, since: firstSeen), limit: limit) }
        return (target, payload, isIPhone)
    }

    /// Stores a measurement taken before the payload is known, keeping at most `limit` spread
    /// evenly over the whole wait: the first (the arrival time) and the latest always survive.
    ///
    /// All but the last kept measurement are settled; the last is the latest one heard. A new
    /// measurement settles the last one only when it comes at least the settled ones' mean
    /// spacing after the newest settled one; otherwise it replaces the last. When the buffer is
    /// full every other settled one is dropped, which doubles that spacing. So a phone read 20
    /// minutes after it arrived keeps its measurements about a minute apart, not only its
    /// first and its last few seconds (which would leave a gap the diary takes for a
    /// check-out).
    mutating func buffer(_ measurement: BufferedMeasurement, limit: Int) {
        let n = earlier.count
        if n >= 3 {
            let spacing = (earlier[n - 2].offset - earlier[0].offset) / Float(n - 2)
            if measurement.offset - earlier[n - 2].offset < spacing {
                earlier[n - 1] = measurement
                return
            }
        }
        if n >= max(limit, 3) {
            var kept = [BufferedMeasurement]()
            kept.reserveCapacity(n / 2 + 2)
            for k in stride(from: 0, to: n - 1, by: 2) { kept.append(earlier[k]) }
            kept.append(earlier[n - 1])
            earlier = kept
        }
        earlier.append(measurement)
    }

    /// Whether this target can be due a connection at some time while nothing but the clock
    /// changes: everything in ``SensorNode/connectionCandidate(_:now:)`` except recency, backoff
    /// and the times that make a re-read or a share due. Only a sighting or a session changes
    /// what it depends on, which is what lets the table list these targets as they are heard
    /// instead of the tick walking every target.
    func mayConnect(_ configuration: NodeConfiguration) -> Bool {
        guard connectable, !notHerald, !isVenueBeacon, failures < configuration.maximumConnectionFailures else { return false }
        switch source {
        case .herald, .openTrace, .apple: break
        case .advert, .writer: return false
        }
        if payload == nil || payloadReadAt == nil { return true }
        return configuration.payloadUpdateInterval != nil || (configuration.payloadSharing && isIPhone)
    }

    mutating func recordFailure(now: Double, configuration: NodeConfiguration) {
        failures += 1
        let doubling = Double(1 << min(failures - 1, 20))
        nextAttemptAt = now + min(configuration.retryBackoff * doubling, configuration.retryBackoffMaximum)
    }
}

/// A measurement held for attribution: seconds after the target was first seen (Float: a
/// target is forgotten after half an hour, well within its precision) and RSSI in dBm (Int8;
/// `Int8.min` for none: HCI reports RSSI in -127…20).
struct BufferedMeasurement: Equatable {
    var offset: Float
    var rssi: Int8

    init(time: Double, rssi: Int?, since origin: Double) {
        offset = Float(time - origin)
        self.rssi = rssi.map { Int8(clamping: $0) } ?? .min
    }

    func measurement(since origin: Double) -> RSSISample {
        RSSISample(time: origin + Double(offset), rssi: rssi == .min ? nil : Int(rssi))
    }
}
