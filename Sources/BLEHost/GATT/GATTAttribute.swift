/// One row of the GATT database (BlueZ gatt-db style): a handle, a type, permissions and a value.
public struct GATTAttribute: Hashable, Sendable {
    /// What the attribute is within GATT; the server needs it for grouping, per-link values and
    /// the "Attribute Not Long" rule.
    public enum Role: Hashable, Sendable {
        /// A primary service declaration; the group runs up to `endGroupHandle`.
        case primaryService(endGroupHandle: UInt16)
        case characteristicDeclaration
        /// A characteristic value; `isDynamic` when the application may replace it.
        case characteristicValue(isDynamic: Bool)
        /// A CCCD: its value lives per link, not here.
        case clientConfiguration(characteristicValueHandle: UInt16)
        /// Any other descriptor with a fixed value, such as the user description.
        case descriptor
    }

    public var handle: UInt16
    public var type: BluetoothUUID
    public var permissions: ATTPermissions
    /// The stored value (declarations hold their encoded declaration; CCCDs hold nothing).
    public var value: [UInt8]
    public var role: Role

    public init(handle: UInt16, type: BluetoothUUID, permissions: ATTPermissions, value: [UInt8], role: Role) {
        self.handle = handle
        self.type = type
        self.permissions = permissions
        self.value = value
        self.role = role
    }

    /// Declarations and CCCDs have a fixed, short length: Read Blob on them answers
    /// "Attribute Not Long" when the whole value fits in one Read Response.
    var hasFixedLength: Bool {
        switch role {
        case .primaryService, .characteristicDeclaration, .clientConfiguration: return true
        case .characteristicValue, .descriptor: return false
        }
    }
}

/// A characteristic in the database, by handles: what the application uses to update values and
/// what server events name.
public struct GATTCharacteristic: Hashable, Sendable {
    public var service: BluetoothUUID
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    public var clientConfigurationHandle: UInt16?
    /// The last handle that belongs to the characteristic (its last descriptor, or the value).
    public var endHandle: UInt16
}
