import BLEHost
import Herald

/// The advertising data a simulated device sends, built with the project's advertising-data
/// builder from its ``AdvertContent``.
extension SimulatedDevice {
    /// The AD structures of its advert during rotation `epoch` (a GAEN phone's changes with its
    /// RPI); empty for a device that does not advertise.
    public func advertisingData(epoch: Int64) -> [UInt8] {
        guard let advert else { return [] }
        var b = AdvertisingDataBuilder()
        switch advert {
        case .heraldAndroid(let pseudo):
            b.appendFlags(.generalDiscoverableLEOnly)
            b.appendServiceUUIDs([HeraldUUIDs.service])
            b.appendManufacturerData(company: HeraldUUIDs.manufacturerID, pseudo.bytes)
        case .heraldService:
            // An iPhone in the foreground: iOS adds its TX power level to what an app advertises.
            b.appendFlags(.generalDiscoverableLEOnly)
            b.appendServiceUUIDs([HeraldUUIDs.service])
            b.appendTxPowerLevel(SimulatedDevice.iPhoneTxPower)
        case .apple(let data):
            // Flags when they fit: an AirPods record fills the advert on its own.
            if data.count + 4 + 3 <= AdvertisingPayload.maximumLength { b.appendFlags(.generalDiscoverableLEOnly) }
            b.appendManufacturerData(company: HeraldUUIDs.appleManufacturerID, data)
        case .exposureNotification:
            b.appendFlags(.generalDiscoverableLEOnly)
            b.appendServiceUUIDs([InteropUUIDs.exposureNotification])
            b.appendServiceData(
                InteropUUIDs.exposureNotification,
                rotation.rollingProximityIdentifier(ofEpoch: epoch) + rotation.encryptedMetadata(ofEpoch: epoch))
        case .other(let company, let data, let services):
            if !services.isEmpty { b.appendServiceUUIDs(services.map { BluetoothUUID($0) }) }
            b.appendManufacturerData(company: company, data)
        }
        // Every content above fits 31 bytes (checked by the tests); never send more.
        return Array(b.bytes.prefix(AdvertisingPayload.maximumLength))
    }

    /// The TX power level (dBm) an iPhone announces in its own adverts.
    public static let iPhoneTxPower: Int8 = 12

    /// Whether a central can connect to it: everything but Exposure Notification, which
    /// advertises non-connectable.
    public var isConnectable: Bool {
        guard let advert else { return false }
        if case .exposureNotification = advert { return false }
        return true
    }
}
