/// A primary service as the application describes it; ``GATTDatabase`` turns descriptions into
/// attributes with handles.
public struct GATTServiceDescription: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var characteristics: [GATTCharacteristicDescription]

    public init(uuid: BluetoothUUID, characteristics: [GATTCharacteristicDescription]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// A characteristic as the application describes it. A Client Characteristic Configuration
/// descriptor is added if and only if `properties` contains notify or indicate.
public struct GATTCharacteristicDescription: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    public var value: GATTCharacteristicValue
    /// Adds a Characteristic User Description descriptor (0x2901) with this text.
    public var userDescription: String?

    public init(
        uuid: BluetoothUUID, properties: GATTCharacteristicProperties, value: GATTCharacteristicValue = .fixed([]),
        userDescription: String? = nil
    ) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.userDescription = userDescription
    }
}

/// Where a characteristic's value comes from.
public enum GATTCharacteristicValue: Hashable, Sendable {
    /// Set once when the database is built.
    case fixed([UInt8])
    /// Owned by the application, which replaces it at run time with
    /// ``GATTDatabase/setValue(_:forCharacteristic:)`` (the venue payload, for instance).
    case dynamic(initial: [UInt8])
}
