/// Read Request (0x0A): the value of one attribute (the first ATT_MTU − 1 bytes of it).
public struct ATTReadRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readRequest
    public var handle: UInt16

    public init(handle: UInt16) { self.handle = handle }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("attribute handle")
        try r.expectEnd("read request")
    }

    public func appendParameters(to bytes: inout [UInt8]) { bytes.appendLE16(handle) }
}

/// Read Response (0x0B).
public struct ATTReadResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readResponse
    public var value: [UInt8]

    public init(value: [UInt8]) { self.value = value }
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { value = Array(parameters) }
    public func appendParameters(to bytes: inout [UInt8]) { bytes.append(contentsOf: value) }
}

/// Read Blob Request (0x0C): part of a long value, from `offset`.
public struct ATTReadBlobRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readBlobRequest
    public var handle: UInt16
    public var offset: UInt16

    public init(handle: UInt16, offset: UInt16) {
        self.handle = handle
        self.offset = offset
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("attribute handle")
        offset = try r.readLE16("value offset")
        try r.expectEnd("read blob request")
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(handle)
        bytes.appendLE16(offset)
    }
}

/// Read Blob Response (0x0D).
public struct ATTReadBlobResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readBlobResponse
    public var value: [UInt8]

    public init(value: [UInt8]) { self.value = value }
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { value = Array(parameters) }
    public func appendParameters(to bytes: inout [UInt8]) { bytes.append(contentsOf: value) }
}

/// Read Multiple Request (0x0E): the concatenated values of two or more attributes.
public struct ATTReadMultipleRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readMultipleRequest
    public var handles: [UInt16]

    public init(handles: [UInt16]) { self.handles = handles }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        guard r.remaining >= 4, r.remaining % 2 == 0 else {
            throw DecodeError(.lengthMismatch, field: "set of handles", detail: "\(r.remaining) bytes; needs two or more handles")
        }
        handles = []
        while !r.isEmpty { handles.append(try r.readLE16("handle")) }
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        for handle in handles { bytes.appendLE16(handle) }
    }
}

/// Read Multiple Response (0x0F).
public struct ATTReadMultipleResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readMultipleResponse
    public var values: [UInt8]

    public init(values: [UInt8]) { self.values = values }
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { values = Array(parameters) }
    public func appendParameters(to bytes: inout [UInt8]) { bytes.append(contentsOf: values) }
}
