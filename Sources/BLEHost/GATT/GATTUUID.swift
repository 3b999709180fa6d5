/// Assigned numbers GATT itself uses (Bluetooth Assigned Numbers, sections 3.4, 3.5, 3.8).
public enum GATTUUID {
    public static let primaryService = BluetoothUUID(0x2800 as UInt16)
    public static let secondaryService = BluetoothUUID(0x2801 as UInt16)
    public static let include = BluetoothUUID(0x2802 as UInt16)
    public static let characteristic = BluetoothUUID(0x2803 as UInt16)
    public static let characteristicUserDescription = BluetoothUUID(0x2901 as UInt16)
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902 as UInt16)

    public static let genericAccessService = BluetoothUUID(0x1800 as UInt16)
    public static let genericAttributeService = BluetoothUUID(0x1801 as UInt16)
    public static let deviceName = BluetoothUUID(0x2A00 as UInt16)
    public static let appearance = BluetoothUUID(0x2A01 as UInt16)
    public static let serviceChanged = BluetoothUUID(0x2A05 as UInt16)
}
