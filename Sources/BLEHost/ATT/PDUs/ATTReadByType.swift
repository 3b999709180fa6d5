/// Read By Type Request (0x08): values of all attributes of `attributeType` in a range; with
/// 0x2803 this discovers characteristics.
public struct ATTReadByTypeRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readByTypeRequest
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var attributeType: BluetoothUUID

    public init(startHandle: UInt16, endHandle: UInt16, attributeType: BluetoothUUID) {
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.attributeType = attributeType
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        startHandle = try r.readLE16("starting handle")
        endHandle = try r.readLE16("ending handle")
        attributeType = try r.readATTUUID(size: r.remaining, "attribute type")
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(startHandle)
        bytes.appendLE16(endHandle)
        attributeType.appendShortestForm(to: &bytes)
    }
}

/// Read By Type Response (0x09): (handle, value) pairs that all have the same length.
public struct ATTReadByTypeResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readByTypeResponse

    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var value: [UInt8]
        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    /// At least one entry; the length byte on the wire comes from the first entry.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        let length = Int(try r.readU8("length"))
        guard length >= 2 else {
            throw DecodeError(.invalidValue, field: "length", detail: "\(length); an entry holds at least a handle")
        }
        guard !r.isEmpty, r.remaining % length == 0 else {
            throw DecodeError(.lengthMismatch, field: "attribute data list", detail: "\(r.remaining) bytes in entries of \(length)")
        }
        entries = []
        while !r.isEmpty {
            let handle = try r.readLE16("handle")
            entries.append(Entry(handle: handle, value: Array(try r.readBytes(length - 2, "value"))))
        }
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
        for entry in entries {
            bytes.appendLE16(entry.handle)
            bytes.append(contentsOf: entry.value)
        }
    }
}
