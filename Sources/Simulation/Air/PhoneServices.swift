import BLEHost
import Herald

/// The GATT server of a simulated phone, built with the project's GATT database: what a node
/// finds when it connects.
enum PhoneServices {
    /// Herald for Android: the Herald service with the Android signal characteristic (write) and
    /// the payload characteristic (read). Herald for iOS: the iOS signal characteristic (write,
    /// notify) instead. Anything else: a battery service and no Herald.
    static func database(for device: SimulatedDevice) -> GATTDatabase? {
        var services: [GATTServiceDescription]
        switch device.kind {
        case .heraldAndroid, .heraldAndroidWriter:
            services = [herald(signal: HeraldUUIDs.androidSignalCharacteristic, [.write, .writeWithoutResponse], device)]
        case .heraldIPhoneForeground, .heraldIPhoneBackground:
            services = [herald(signal: HeraldUUIDs.iosSignalCharacteristic, [.write, .notify], device)]
        case .gaenPhone, .appleAccessory, .applePhone, .otherDevice:
            services = [
                GATTServiceDescription(
                    uuid: BluetoothUUID(UInt16(0x180F)),
                    characteristics: [.init(uuid: BluetoothUUID(UInt16(0x2A19)), properties: .read, value: .fixed([87]))])
            ]
        }
        return try? GATTDatabase(deviceName: "", appearance: 0, services: services)
    }

    private static func herald(
        signal: BluetoothUUID, _ properties: GATTCharacteristicProperties, _ device: SimulatedDevice
    ) -> GATTServiceDescription {
        GATTServiceDescription(
            uuid: HeraldUUIDs.service,
            characteristics: [
                .init(uuid: signal, properties: properties),
                .init(uuid: HeraldUUIDs.payloadCharacteristic, properties: .read, value: .fixed(device.payload ?? [])),
            ])
    }
}
