import BLEHost
import Herald
import VenueNode

extension Settings {
    /// The node as the config file describes it: `[venue]` as the Herald venue beacon V1
    /// payload, `[bluetooth]`'s radio settings and link cap, `[herald]`'s policy and the diary's
    /// limits. The settings already refused a payload over 510 bytes.
    public var nodeSetup: NodeSetup {
        NodeSetup(
            beacon: venue.beacon,
            legacyService: bluetooth.legacyService, advertising: advertisingParameters, scanning: scanParameters,
            maxConnections: bluetooth.maxConnections, idleLinkSeconds: Double(bluetooth.idleLinkSeconds),
            node: heraldPolicy, classifier: classifierConfiguration, diary: diarySettings)
    }

    /// `[herald]`'s policy settings (``NodeSetup/nodeConfiguration`` adds what follows from the
    /// link cap and the diary).
    var heraldPolicy: NodeConfiguration {
        var node = NodeConfiguration()
        node.connectionAttemptTimeout = Double(herald.connectionTimeoutSeconds)
        node.payloadUpdateInterval = herald.payloadUpdateSeconds.map(Double.init)
        node.peripheralCleanInterval = Double(herald.peripheralCleanSeconds)
        node.payloadSharing = herald.payloadSharing
        return node
    }

    /// Which adverts the node follows.
    var classifierConfiguration: AdvertClassifier.Configuration {
        AdvertClassifier.Configuration(gaen: herald.gaen, openTrace: herald.openTrace, advertProtocolService: herald.advertProtocolService)
    }

    /// Scan parameters: passive, `[bluetooth]` window out of interval (units of 0.625 ms).
    var scanParameters: LESetScanParameters {
        LESetScanParameters(
            type: .passive, interval: Self.slots(bluetooth.scanIntervalMS), window: Self.slots(bluetooth.scanWindowMS))
    }

    /// Advertising parameters: connectable undirected, `[bluetooth]` interval (units of 0.625 ms).
    var advertisingParameters: LESetAdvertisingParameters {
        let interval = Self.slots(bluetooth.advertisingIntervalMS)
        return LESetAdvertisingParameters(intervalMin: interval, intervalMax: interval, type: .connectableUndirected)
    }

    /// Milliseconds in the controller's 0.625 ms units, rounded to the nearest.
    static func slots(_ milliseconds: Int) -> UInt16 {
        UInt16(clamping: (milliseconds * 8 + 2) / 5)
    }
}
