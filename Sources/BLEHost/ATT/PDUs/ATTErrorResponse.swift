/// Error Response (0x01): the request `requestOpcode` on `handle` failed with `error`.
public struct ATTErrorResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.errorResponse
    public var requestOpcode: ATTOpcode
    public var handle: UInt16
    public var error: ATTErrorCode

    public init(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.error = error
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        requestOpcode = ATTOpcode(try r.readU8("request opcode"))
        handle = try r.readLE16("attribute handle")
        error = ATTErrorCode(try r.readU8("error code"))
        try r.expectEnd("error response")
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.append(requestOpcode.rawValue)
        bytes.appendLE16(handle)
        bytes.append(error.rawValue)
    }
}
