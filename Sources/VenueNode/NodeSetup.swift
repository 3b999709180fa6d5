import BLEHost
import Herald
import VenueDiary

/// How the venue node is built: the beacon it advertises, its radio settings, the Herald policy
/// and the diary's limits. `venue-beacon run` gets one from the config file and `simulate` from
/// the config file or these defaults, and both build the node from it the same way, so a
/// simulated venue runs the node an operator configured.
public struct NodeSetup: Sendable {
    public var beacon: BeaconPayload
    /// Also offer the Herald service under its legacy UUID.
    public var legacyService: Bool
    public var advertising: LESetAdvertisingParameters
    public var scanning: LESetScanParameters
    /// At most this many links at once, the node's and phones' together.
    public var maxConnections: Int
    /// Seconds a phone's link (the phone connected to us) may go without a valid signal write
    /// or a payload read before it is dropped (and its address backed off).
    public var idleLinkSeconds: Double
    /// The Herald policy as configured; ``nodeConfiguration`` is what the node runs. Its
    /// `connectionAttemptTimeout` is each connection attempt's one deadline (the host keeps it).
    public var node: NodeConfiguration
    public var classifier: AdvertClassifier.Configuration
    public var diary: DiarySettings

    /// `venue-beacon run`'s defaults (advertising every 200 ms, scanning 50 of every 100 ms, 8
    /// links, 12 s connection timeout, Herald's policy, the diary's limits) for a venue named
    /// "Simulated Venue".
    public init(
        beacon: BeaconPayload = BeaconPayload(country: 826, state: 4, code: 123123, name: "Simulated Venue"),
        legacyService: Bool = false,
        advertising: LESetAdvertisingParameters = LESetAdvertisingParameters(intervalMin: 320, intervalMax: 320),
        scanning: LESetScanParameters = LESetScanParameters(interval: 160, window: 80), maxConnections: Int = 8,
        idleLinkSeconds: Double = 20, node: NodeConfiguration = NodeConfiguration(),
        classifier: AdvertClassifier.Configuration = .init(), diary: DiarySettings = DiarySettings()
    ) {
        self.beacon = beacon
        self.legacyService = legacyService
        self.advertising = advertising
        self.scanning = scanning
        self.maxConnections = maxConnections
        self.idleLinkSeconds = idleLinkSeconds
        self.node = node
        self.classifier = classifier
        self.diary = diary
    }

    /// The policy the node runs: the configured one, with one link left free for phones that
    /// connect to read the venue payload.
    public var nodeConfiguration: NodeConfiguration {
        var node = node
        node.concurrentConnectionQuota = min(node.concurrentConnectionQuota, max(1, maxConnections - 1))
        return node
    }

    /// How long each GATT request of the node's own (MTU exchange, discovery, the payload read,
    /// a signal write) waits for the phone before the read is abandoned and the link closed. A
    /// product choice, shorter than ATT's 30 s transaction timeout: a phone in range answers
    /// within a few connection intervals (tens of milliseconds; a second at the slowest
    /// parameters phones use), and a peer that never answers should not hold one of the node's
    /// few links for half a minute.
    public static let requestTimeout: Duration = .seconds(10)

    /// A phone dropped for idleness is refused for 30 s, then 60 s, … at most 5 min.
    public static let idleBackoff: Duration = .seconds(30)
    public static let maximumIdleBackoff: Duration = .seconds(300)

    /// What the node advertises and serves.
    public func identity() throws(PayloadSizeError) -> VenueBeaconIdentity {
        try VenueBeaconIdentity(beacon: beacon, legacyService: legacyService)
    }

    /// What the host is asked for: the venue's GATT database, advertising and scanning, the link cap.
    public func hostConfiguration(
        identity: VenueBeaconIdentity, gate: SignalWriteGate, switchedOn: RadioState = RadioState(advertising: true, scanning: true)
    ) throws -> HostConfiguration {
        HostConfiguration(
            database: try identity.database(),
            advertising: AdvertisingConfiguration(
                parameters: advertising, data: try identity.advertisingData(), scanResponse: try identity.scanResponse()),
            scanning: scanning,
            // The node gives every attempt its own deadline; this default is for requests without one.
            linkManager: LinkManager.Configuration(
                connectTimeout: .milliseconds(Int64((node.connectionAttemptTimeout * 1000).rounded())), maximumConnections: maxConnections),
            validateWrite: gate.validate,
            switchedOn: switchedOn,
            requestTimeout: Self.requestTimeout,
            inboundLinks: InboundLinkGuard.Configuration(
                idleTimeout: .milliseconds(Int64((idleLinkSeconds * 1000).rounded())), backoff: Self.idleBackoff,
                maximumBackoff: Self.maximumIdleBackoff))
    }

    /// The node's driver around the Herald policy.
    public func driver() throws -> NodeDriver {
        NodeDriver(node: SensorNode(configuration: nodeConfiguration), classifier: try AdvertClassifier(classifier))
    }
}
