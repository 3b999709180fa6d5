/// Prepare Write Request (0x16): queue part of a long write at `offset`; nothing is written
/// until Execute Write.
public struct ATTPrepareWriteRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.prepareWriteRequest
    public var handle: UInt16
    public var offset: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, offset: UInt16, value: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.value = value
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("attribute handle")
        offset = try r.readLE16("value offset")
        value = Array(r.readRest())
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(handle)
        bytes.appendLE16(offset)
        bytes.append(contentsOf: value)
    }
}

/// Prepare Write Response (0x17): echoes the request so the client can check what was queued.
public struct ATTPrepareWriteResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.prepareWriteResponse
    public var handle: UInt16
    public var offset: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, offset: UInt16, value: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.value = value
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("attribute handle")
        offset = try r.readLE16("value offset")
        value = Array(r.readRest())
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(handle)
        bytes.appendLE16(offset)
        bytes.append(contentsOf: value)
    }
}

/// Execute Write Request (0x18): write (flags 0x01) or discard (0x00) everything prepared.
public struct ATTExecuteWriteRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.executeWriteRequest
    public static let cancel: UInt8 = 0x00
    public static let write: UInt8 = 0x01

    /// Kept raw: values other than 0 and 1 decode, and the server answers them with Invalid PDU.
    public var flags: UInt8

    public init(flags: UInt8) { self.flags = flags }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        flags = try r.readU8("flags")
        try r.expectEnd("execute write request")
    }

    public func appendParameters(to bytes: inout [UInt8]) { bytes.append(flags) }
}

/// Execute Write Response (0x19): no parameters.
public struct ATTExecuteWriteResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.executeWriteResponse

    public init() {}

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        try ByteReader(parameters).expectEnd("execute write response")
    }

    public func appendParameters(to bytes: inout [UInt8]) {}
}
