/// An ATT error code carried in an Error Response (Core Vol 3 Part F 3.4.1.1). Open: codes from
/// newer specs or application ranges (0x80–0x9F) and common profile codes (0xE0–0xFF) survive.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(0x01)
    public static let readNotPermitted = ATTErrorCode(0x02)
    public static let writeNotPermitted = ATTErrorCode(0x03)
    public static let invalidPDU = ATTErrorCode(0x04)
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    public static let requestNotSupported = ATTErrorCode(0x06)
    public static let invalidOffset = ATTErrorCode(0x07)
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    public static let prepareQueueFull = ATTErrorCode(0x09)
    /// Ends every discovery loop: there is nothing more in the requested range.
    public static let attributeNotFound = ATTErrorCode(0x0A)
    public static let attributeNotLong = ATTErrorCode(0x0B)
    public static let insufficientEncryptionKeySize = ATTErrorCode(0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    public static let unlikelyError = ATTErrorCode(0x0E)
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    public static let insufficientResources = ATTErrorCode(0x11)
    /// Common profile error (Core Supplement Part B 1.2): a CCCD write asked for notifications or
    /// indications the characteristic does not support.
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)

    public var description: String {
        let name: String
        switch rawValue {
        case 0x01: name = "invalid handle"
        case 0x02: name = "read not permitted"
        case 0x03: name = "write not permitted"
        case 0x04: name = "invalid PDU"
        case 0x05: name = "insufficient authentication"
        case 0x06: name = "request not supported"
        case 0x07: name = "invalid offset"
        case 0x08: name = "insufficient authorization"
        case 0x09: name = "prepare queue full"
        case 0x0A: name = "attribute not found"
        case 0x0B: name = "attribute not long"
        case 0x0C: name = "insufficient encryption key size"
        case 0x0D: name = "invalid attribute value length"
        case 0x0E: name = "unlikely error"
        case 0x0F: name = "insufficient encryption"
        case 0x10: name = "unsupported group type"
        case 0x11: name = "insufficient resources"
        case 0xFD: name = "CCCD improperly configured"
        default: name = "error"
        }
        let hex = String(rawValue, radix: 16)
        return "\(name) (0x\(hex.count < 2 ? "0" : "")\(hex))"
    }
}
