import BLEHost
import Sightings

/// The Herald sensor node's policy: which devices it follows, which it connects to and what it
/// does on each connection, what it shares, and the ``SensorEvent``s it reports. A value with no
/// I/O and no clock: the runtime feeds it adverts, signal writes, link outcomes and clock ticks,
/// and performs the ``NodeAction``s it returns.
///
/// Actions are appended to a caller-owned array so that a runtime reusing one array allocates
/// nothing per advert for them.
public struct SensorNode: Sendable {
    public let configuration: NodeConfiguration
    var table: TargetTable
    /// Payloads of confirmed iPhones and when each was last seen, by target (hashing a target id
    /// per measurement, not its payload): what the node shares.
    var recentIPhonePayloads: [TargetID: RecentPayload] = [:]

    struct RecentPayload: Sendable {
        let bytes: [UInt8]
        var seen: Double
        /// Where the payload goes in the order sharing walks (FNV-1a of the bytes): a
        /// fingerprint sorts faster than the payloads, which share their first bytes.
        let order: UInt64

        init(bytes: [UInt8], seen: Double) {
            self.bytes = bytes
            self.seen = seen
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            order = hash
        }
    }
    /// Sessions still connecting, and all sessions (connecting included).
    var attempts = 0
    var sessions = 0
    /// The last tick's ranking of targets to connect to.
    var connectQueue = ConnectionQueue()
    /// No attempt starts before this (scanning gets its share after each attempt), nor while
    /// the host has no link free (until the next tick or one of the node's links closes).
    var nextAttemptAt = 0.0
    var refused = false
    /// The runtime's controller goes on scanning while it makes a connection: attempts need no
    /// share of time left for scanning (``NodeConfiguration/connectingShare``), only the minimum gap.
    public var controllerScansWhileConnecting = false
    public internal(set) var counters = NodeCounters()

    public init(configuration: NodeConfiguration = NodeConfiguration()) {
        self.configuration = configuration
        table = TargetTable(configuration: configuration)
    }

    public var targetCount: Int { table.count }

    public func target(_ id: TargetID) -> Target? { table.target(id) }

    /// The payload known for a target.
    public func payload(of id: TargetID) -> SensorPayload? { table[id]?.payload }

    // MARK: Adverts

    /// One classified advertising report.
    public mutating func advert(_ sighting: AdvertSighting, now: Double, into actions: inout [NodeAction]) {
        counters.adverts += 1
        let id: TargetID
        switch sighting.advertClass {
        case .ignored(let reason):
            // A followed device's scan response, or an advert without its usual content, still
            // measures it; an unknown device costs nothing more.
            guard let known = table.id(address: sighting.address) else {
                counters.advertsIgnored += 1
                if reason == .appleAccessory { counters.appleAccessories += 1 }
                return
            }
            id = known
        case .herald(let pseudo, _):
            id = findOrInsert(sighting, pseudo: pseudo, source: .herald, now: now, into: &actions)
        case .apple:
            id = findOrInsert(sighting, pseudo: nil, source: .apple, now: now, into: &actions)
        case .openTrace:
            id = findOrInsert(sighting, pseudo: nil, source: .openTrace, now: now, into: &actions)
        case .gaen(let advert):
            id = findOrInsert(sighting, pseudo: nil, source: .advert, now: now, into: &actions)
            if table.update(id, { Self.same($0.payload, kind: .gaen, advert) }) != true {
                learn(SensorPayload(kind: .gaen, bytes: advert.rpi, metadata: advert.metadata), for: id, now: now, into: &actions)
            }
        case .advertProtocol(let data):
            id = findOrInsert(sighting, pseudo: nil, source: .advert, now: now, into: &actions)
            if table.update(id, { Self.same($0.payload, kind: .advert, data) }) != true {
                learn(SensorPayload(kind: .advert, bytes: Array(data)), for: id, now: now, into: &actions)
            }
        }
        measure(id, rssi: sighting.rssi, txPower: sighting.txPower, now: now, connectable: sighting.connectable, into: &actions)
        // In a crowd adverts come every few milliseconds: the next attempt starts with the first
        // one after the scanning gap, not at the next tick.
        if now >= nextAttemptAt, !connectQueue.isEmpty { startConnections(now: now, into: &actions) }
    }

    private mutating func findOrInsert(
        _ sighting: AdvertSighting, pseudo: PseudoDeviceAddress?, source: TargetRecord.Source, now: Double, into actions: inout [NodeAction]
    ) -> TargetID {
        if let id = table.find(address: sighting.address, addressType: sighting.addressType, pseudo: pseudo) {
            // What a device shows can only make it more certain: an Apple device that shows the
            // Herald service is Herald; a Herald phone's scan response does not make it "Apple".
            table.raiseSource(id, to: source)
            return id
        }
        return add(address: sighting.address, addressType: sighting.addressType, pseudo: pseudo, source: source, now: now, into: &actions)
    }

    /// A new target: reported as detected; when the table is full it takes the place of the
    /// target heard least recently.
    private mutating func add(
        address: BluetoothAddress, addressType: AddressType, pseudo: PseudoDeviceAddress?, source: TargetRecord.Source, now: Double,
        into actions: inout [NodeAction]
    ) -> TargetID {
        if table.isFull, let evicted = table.forgetLeastRecent() {
            counters.targetsEvicted += 1
            actions.append(.event(.delete(evicted, time: now)))
        }
        let id = table.insert(address: address, addressType: addressType, pseudo: pseudo, source: source, now: now)
        counters.targetsDetected += 1
        if let target = table.target(id) { actions.append(.event(.detect(target, time: now))) }
        return id
    }

    private static func same(_ payload: SensorPayload?, kind: PayloadKind, _ advert: GAENAdvert) -> Bool {
        guard let payload, payload.kind == kind, payload.bytes.count == 16 else { return false }
        var high: UInt64 = 0, low: UInt64 = 0
        for k in 0..<8 { high = high << 8 | UInt64(payload.bytes[k]) }
        for k in 8..<16 { low = low << 8 | UInt64(payload.bytes[k]) }
        return high == advert.rpiHigh && low == advert.rpiLow
    }

    private static func same(_ payload: SensorPayload?, kind: PayloadKind, _ data: ArraySlice<UInt8>) -> Bool {
        guard let payload, payload.kind == kind else { return false }
        return payload.bytes.elementsEqual(data)
    }

    /// Reports a measurement: with the payload when it is known, otherwise kept for attribution.
    /// An advert also says when the target was last seen and (unless a scan response) whether it
    /// accepts connections; one in-place update of the record does all of it.
    private mutating func measure(
        _ id: TargetID, rssi: Int?, txPower: Int? = nil, now: Double, connectable: Bool? = nil, into actions: inout [NodeAction]
    ) {
        let limit = configuration.maximumBufferedMeasurements
        let measured = table.sight(id, now: now) { record in
            if let connectable { record.connectable = connectable }
            return record.measure(rssi: rssi, now: now, limit: limit)
        }
        guard let measured = measured ?? nil else { return }
        if measured.isIPhone, let payload = measured.payload {
            // One lookup a measurement; arrays sharing storage compare equal at once, so the
            // fingerprint is taken only when the payload is new.
            if let index = recentIPhonePayloads.index(forKey: measured.target.id), recentIPhonePayloads.values[index].bytes == payload.bytes {
                recentIPhonePayloads.values[index].seen = now
            } else {
                recentIPhonePayloads[measured.target.id] = RecentPayload(bytes: payload.bytes, seen: now)
            }
        }
        actions.append(.event(.measure(measured.target, rssi: rssi, payload: measured.payload, txPower: txPower, time: now)))
    }

    /// A payload became known for a target: report it with the measurements taken before.
    mutating func learn(_ payload: SensorPayload, for id: TargetID, now: Double, into actions: inout [NodeAction]) {
        let venueBeacon =
            payload.kind == .herald && !configuration.recordVenueBeacons && PayloadFormat(classifying: payload.bytes) == .venueBeacon
        let learned = table.update(id) { record -> (target: Target, earlier: [RSSISample], wasVenueBeacon: Bool)? in
            record.payloadReadAt = now
            if record.payload == payload { return nil }
            record.payload = payload
            let earlier = record.earlierMeasurements
            record.earlier = []
            let was = record.isVenueBeacon
            record.isVenueBeacon = venueBeacon
            return (record.target, earlier, was)
        }
        guard let learned = learned ?? nil else { return }
        if venueBeacon {
            if !learned.wasVenueBeacon { counters.venueBeacons += 1 }
            return
        }
        counters.payloadsRead += 1
        actions.append(.event(.read(learned.target, payload: payload, earlier: learned.earlier, time: now)))
    }

    // MARK: Signal writes

    /// A write to our signal characteristic that decoded; `address` is the writing central.
    public mutating func signalWrite(
        _ write: SignalWrite, from address: BluetoothAddress, addressType: AddressType, now: Double, into actions: inout [NodeAction]
    ) {
        counters.signalWrites += 1
        let id: TargetID
        if let known = table.find(address: address, addressType: addressType, pseudo: nil) {
            id = known
        } else {
            id = add(address: address, addressType: addressType, pseudo: nil, source: .writer, now: now, into: &actions)
        }
        // Every write is a sighting of the writer; 0x02 and 0x03 say how strongly it hears us.
        var rssi: Int? = nil
        switch write {
        case .payload(let bytes):
            if !bytes.isEmpty { learn(SensorPayload(kind: .herald, bytes: bytes), for: id, now: now, into: &actions) }
        case .rssi(let value):
            rssi = Int(value)
        case .payloadSharing(let value, let data):
            rssi = Int(value)
            if let target = table.target(id) {
                if let parts = SharedPayloads.split(data[...], writerPayloadLength: table[id]?.payload?.bytes.count) {
                    if !parts.isEmpty {
                        let payloads = parts.map { SensorPayload(kind: .herald, bytes: Array($0)) }
                        actions.append(.event(.share(target, payloads: payloads, rssi: rssi, time: now)))
                    }
                } else {
                    counters.sharesUnsplittable += 1
                }
            }
        case .immediate(let data):
            if let target = table.target(id) { actions.append(.immediateData(target, data)) }
        case .wake:
            break
        case .unknown:
            counters.signalWritesUnknown += 1
        }
        measure(id, rssi: rssi, now: now, into: &actions)
    }

    /// A write the runtime answered with ATT error 0x0D (see ``SignalWriteError``).
    public mutating func signalWriteRejected() {
        counters.signalWritesRejected += 1
    }

    // MARK: Bluetooth state

    public mutating func bluetoothState(_ state: RadioCondition, now: Double, into actions: inout [NodeAction]) {
        if state != .running {
            // The controller's links are gone with it; those sessions are nobody's fault.
            table.sessions.removeAll()
            sessions = 0
            attempts = 0
            connectQueue.removeAll()
        }
        actions.append(.event(.bluetoothState(state, time: now)))
    }
}
