import BLEHost
import Herald

/// What the node shows phones: the advert that makes Herald apps recognise a venue, the scan
/// response with its name, and the GATT service that serves the venue payload and takes signal
/// writes. Pure: built once at start from the config.
///
/// - Advert: flags 0x06, the complete 16-bit service list with 0xFCF6 (the UUID must be in the
///   advert itself: phones ignored Herald's C++ beacon while TX power pushed it out), and with
///   `legacyService` the pre-2.1 128-bit service too. 25 bytes at most.
/// - Scan response: the venue name, cut to a shortened name at a character boundary when it
///   does not fit in 31 bytes.
/// - GATT: the Herald service with the **Android** signal characteristic (write, write without
///   response) and the payload characteristic (read, long reads). With the Android signal
///   characteristic an iPhone reads the payload once, disconnects, then follows the venue by
///   RSSI. With `legacyService` the same characteristics are served under the legacy service,
///   which phones that found us by it discover. GAP device name = the venue name.
public struct VenueBeaconIdentity: Hashable, Sendable {
    /// The venue beacon payload phones read.
    public let payload: [UInt8]
    public let name: String
    public let legacyService: Bool

    /// Throws ``PayloadSizeError`` (naming the field) when the payload passes 510 bytes.
    public init(beacon: BeaconPayload, legacyService: Bool) throws(PayloadSizeError) {
        payload = try beacon.encoded()
        name = beacon.name ?? ""
        self.legacyService = legacyService
    }

    /// The advertised services, 16-bit first.
    public var advertisedServices: [BluetoothUUID] {
        legacyService ? [HeraldUUIDs.service, HeraldUUIDs.legacyService] : [HeraldUUIDs.service]
    }

    public func advertisingData() throws(AdvertisingPayloadTooLong) -> AdvertisingPayload {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        builder.appendServiceUUIDs(advertisedServices)
        return try builder.build()
    }

    public func scanResponse() throws(AdvertisingPayloadTooLong) -> AdvertisingPayload {
        var builder = AdvertisingDataBuilder()
        let (shown, complete) = Self.fit(name, bytes: AdvertisingPayload.maximumLength - 2)
        if !shown.isEmpty { builder.appendLocalName(shown, complete: complete) }
        return try builder.build()
    }

    /// The longest prefix of whole characters that fits in `bytes` of UTF-8, and whether it is
    /// all of `text`.
    static func fit(_ text: String, bytes limit: Int) -> (String, complete: Bool) {
        if text.utf8.count <= limit { return (text, true) }
        var shown = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > limit { break }
            shown.append(character)
            used += size
        }
        return (shown, false)
    }

    /// The Herald service(s) this node serves.
    public var services: [GATTServiceDescription] {
        advertisedServices.map { service in
            GATTServiceDescription(uuid: service, characteristics: [
                GATTCharacteristicDescription(uuid: HeraldUUIDs.androidSignalCharacteristic, properties: [.write, .writeWithoutResponse]),
                GATTCharacteristicDescription(uuid: HeraldUUIDs.payloadCharacteristic, properties: .read, value: .fixed(payload)),
            ])
        }
    }

    /// The node's GATT database: GAP (device name = the venue name), GATT, then the Herald service(s).
    public func database() throws(GATTDatabaseError) -> GATTDatabase {
        try GATTDatabase(deviceName: name, services: services)
    }
}
