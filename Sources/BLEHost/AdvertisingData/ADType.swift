/// An AD structure type (Assigned Numbers, "Common Data Types"). Open.
public struct ADType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(rawValue: 0x01)
    public static let incompleteServiceUUIDs16 = ADType(rawValue: 0x02)
    public static let completeServiceUUIDs16 = ADType(rawValue: 0x03)
    public static let incompleteServiceUUIDs32 = ADType(rawValue: 0x04)
    public static let completeServiceUUIDs32 = ADType(rawValue: 0x05)
    public static let incompleteServiceUUIDs128 = ADType(rawValue: 0x06)
    public static let completeServiceUUIDs128 = ADType(rawValue: 0x07)
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    public static let completeLocalName = ADType(rawValue: 0x09)
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    public static let serviceData16 = ADType(rawValue: 0x16)
    public static let serviceData32 = ADType(rawValue: 0x20)
    public static let serviceData128 = ADType(rawValue: 0x21)
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)

    /// Bytes per UUID for the service UUID list types, nil for other types.
    public var serviceUUIDWidth: Int? {
        switch rawValue {
        case 0x02, 0x03: return 2
        case 0x04, 0x05: return 4
        case 0x06, 0x07: return 16
        default: return nil
        }
    }

    /// Bytes of UUID in front of the payload for the service data types, nil for other types.
    public var serviceDataUUIDWidth: Int? {
        switch rawValue {
        case 0x16: return 2
        case 0x20: return 4
        case 0x21: return 16
        default: return nil
        }
    }

    public var description: String { "AD type 0x" + Hex.encode([rawValue]) }
}

/// The Flags AD structure's bits.
public struct ADFlags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverable = ADFlags(rawValue: 1 << 0)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 1 << 1)
    public static let brEDRNotSupported = ADFlags(rawValue: 1 << 2)
    public static let simultaneousController = ADFlags(rawValue: 1 << 3)
    public static let simultaneousHost = ADFlags(rawValue: 1 << 4)

    /// 0x06: what an LE-only peripheral that wants to be found advertises.
    public static let generalDiscoverableLEOnly: ADFlags = [.leGeneralDiscoverable, .brEDRNotSupported]
}
