import BLEHost

/// Herald's Bluetooth identifiers (see herald-for-ios `BLESensorConfiguration`).
public enum HeraldUUIDs {
    /// The SIG-registered 16-bit service (Linux Foundation), advertised since Herald 2.1.
    public static let service = BluetoothUUID(UInt16(0xFCF6))
    /// The service advertised before 2.1; still detected by phones.
    public static let legacyService = BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b")!
    /// Android signal characteristic: write, write without response.
    public static let androidSignalCharacteristic = BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!
    /// iOS signal characteristic: write and notify.
    public static let iosSignalCharacteristic = BluetoothUUID("0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363")!
    /// Payload characteristic: read, including long reads.
    public static let payloadCharacteristic = BluetoothUUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")!
    /// Manufacturer ID carrying the Android pseudo device address.
    public static let manufacturerID: UInt16 = 0x05F1
    public static let legacyManufacturerID: UInt16 = 0xFFFA
    public static let appleManufacturerID: UInt16 = 0x004C
}

/// Other protocols the node can record from adverts (herald.md §1.4, appliance.md §5).
public enum InteropUUIDs {
    /// Exposure Notification (GAEN) service; its service data carries RPI + AEM.
    public static let exposureNotification = BluetoothUUID(UInt16(0xFD6F))
    /// OpenTrace (BlueTrace) service, advertised by OpenTrace apps.
    public static let openTraceService = BluetoothUUID("a6ba4286-c550-4794-a888-9467ef0b31a8")!
    /// OpenTrace's payload characteristic: read, then write our own payload.
    public static let openTraceCharacteristic = BluetoothUUID("d1034710-b11e-42f2-bca3-f481177d5bb2")!
}
