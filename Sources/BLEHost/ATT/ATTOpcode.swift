/// An ATT opcode (Core Vol 3 Part F 3.3.1). Open: an opcode we do not know survives decoding, so
/// the server can answer "Request Not Supported" or drop it instead of failing.
///
/// Bits 0–5 are the method, bit 6 the command flag (never answered), bit 7 the authentication
/// signature flag.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// Bits 0–5.
    public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: a command, which the receiver never answers (even with an error).
    public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: carries a 12-byte authentication signature.
    public var isSigned: Bool { rawValue & 0x80 != 0 }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    /// Known but not implemented here: decoded as ``ATTPDU/unsupported(opcode:parameters:)``.
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    public static let multipleHandleValueNotification = ATTOpcode(0x23)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)

    /// What an opcode is for; decides who must answer it and how.
    public enum Kind: Hashable, Sendable {
        case request, response, command, notification, indication, confirmation
    }

    /// The kind of a known opcode. Unknown opcodes have none: the receiver drops them when the
    /// command bit is set and answers "Request Not Supported" otherwise.
    public var kind: Kind? {
        switch rawValue {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: return .request
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: return .response
        case 0x52, 0xD2: return .command
        case 0x1B, 0x23: return .notification
        case 0x1D: return .indication
        case 0x1E: return .confirmation
        default: return nil
        }
    }

    /// The opcode of the successful response to this request (requests are even, their
    /// responses the next odd value); nil for anything that is not a known request.
    public var responseOpcode: ATTOpcode? {
        kind == .request ? ATTOpcode(rawValue + 1) : nil
    }

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return "0x" + (hex.count < 2 ? "0" : "") + hex
    }
}
