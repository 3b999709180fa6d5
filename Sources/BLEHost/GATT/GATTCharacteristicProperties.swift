/// The properties byte of a characteristic declaration: which procedures a client may use.
public struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)
}

/// A Client Characteristic Configuration descriptor value (0x2902): what one client subscribed to.
/// Kept per link by the server.
public struct GATTClientConfiguration: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notify = Self(rawValue: 0x0001)
    public static let indicate = Self(rawValue: 0x0002)
}

/// What a peer may do with an attribute over ATT. This host has no pairing, so there are no
/// encryption or authentication requirements to express.
public struct ATTPermissions: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = Self(rawValue: 0x01)
    public static let write = Self(rawValue: 0x02)
}
