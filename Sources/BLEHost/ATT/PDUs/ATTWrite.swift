/// Write Request (0x12): write `value` to `handle`, answered by Write Response or an error.
public struct ATTWriteRequest: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.writeRequest
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// Write Response (0x13): no parameters.
public struct ATTWriteResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.writeResponse

    public init() {}

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        try ByteReader(parameters).expectEnd("write response")
    }

    public func appendParameters(to bytes: inout [UInt8]) {}
}

/// Write Command (0x52): write without response; never answered, not even with an error.
public struct ATTWriteCommand: ATTHandleValuePDU {
    public static let opcode = ATTOpcode.writeCommand
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}
