import BLEHost
import Herald
import VenueNode

extension Settings {
    /// The venue beacon payload phones read: `[venue]` as Herald venue beacon V1.
    public var beaconPayload: BeaconPayload {
        BeaconPayload(
            country: venue.country, state: venue.state, code: venue.code, name: venue.name, location: venue.location,
            area: venue.area, url: venue.url)
    }

    /// What the node advertises and serves. The settings already refused a payload over 510 bytes.
    public func beaconIdentity() throws(PayloadSizeError) -> VenueBeaconIdentity {
        try VenueBeaconIdentity(beacon: beaconPayload, legacyService: bluetooth.legacyService)
    }

    /// The node's policy as `[herald]` and `[bluetooth]` set it.
    public var nodeConfiguration: NodeConfiguration {
        var node = NodeConfiguration()
        node.connectionAttemptTimeout = Double(herald.connectionTimeoutSeconds)
        node.payloadUpdateInterval = herald.payloadUpdateSeconds.map(Double.init)
        node.peripheralCleanInterval = Double(herald.peripheralCleanSeconds)
        node.payloadSharing = herald.payloadSharing
        // One link stays free for phones that connect to read the venue payload.
        node.concurrentConnectionQuota = max(1, bluetooth.maxConnections - 1)
        // A rotated iPhone's new address must be read before the diary closes its visit.
        node.urgentReadWindow = Double(diary.checkOutSeconds)
        return node
    }

    /// Which adverts the node follows.
    public var classifierConfiguration: AdvertClassifier.Configuration {
        AdvertClassifier.Configuration(gaen: herald.gaen, openTrace: herald.openTrace, advertProtocolService: herald.advertProtocolService)
    }

    /// Scan parameters: passive, `[bluetooth]` window out of interval (units of 0.625 ms).
    public var scanParameters: LESetScanParameters {
        LESetScanParameters(
            type: .passive, interval: Self.slots(bluetooth.scanIntervalMS), window: Self.slots(bluetooth.scanWindowMS))
    }

    /// Advertising parameters: connectable undirected, `[bluetooth]` interval (units of 0.625 ms).
    public var advertisingParameters: LESetAdvertisingParameters {
        let interval = Self.slots(bluetooth.advertisingIntervalMS)
        return LESetAdvertisingParameters(intervalMin: interval, intervalMax: interval, type: .connectableUndirected)
    }

    /// Milliseconds in the controller's 0.625 ms units, rounded to the nearest.
    static func slots(_ milliseconds: Int) -> UInt16 {
        UInt16(clamping: (milliseconds * 8 + 2) / 5)
    }
}
