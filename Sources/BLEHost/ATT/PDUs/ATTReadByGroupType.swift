/// Read By Group Type Request (0x10): groups of `groupType` (0x2800 primary service) in a range;
/// discovers all primary services.
public struct ATTReadByGroupTypeRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var groupType: BluetoothUUID

    public init(startHandle: UInt16, endHandle: UInt16, groupType: BluetoothUUID) {
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.groupType = groupType
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        startHandle = try r.readLE16("starting handle")
        endHandle = try r.readLE16("ending handle")
        groupType = try r.readATTUUID(size: r.remaining, "group type")
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(startHandle)
        bytes.appendLE16(endHandle)
        groupType.appendShortestForm(to: &bytes)
    }
}

/// Read By Group Type Response (0x11): (handle, group end handle, value) triples that all have
/// the same length; for services the value is the service UUID.
public struct ATTReadByGroupTypeResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.readByGroupTypeResponse

    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var groupEndHandle: UInt16
        public var value: [UInt8]
        public init(handle: UInt16, groupEndHandle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.groupEndHandle = groupEndHandle
            self.value = value
        }
    }

    /// At least one entry; the length byte on the wire comes from the first entry.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        let length = Int(try r.readU8("length"))
        guard length >= 4 else {
            throw DecodeError(.invalidValue, field: "length", detail: "\(length); an entry holds at least two handles")
        }
        guard !r.isEmpty, r.remaining % length == 0 else {
            throw DecodeError(.lengthMismatch, field: "attribute data list", detail: "\(r.remaining) bytes in entries of \(length)")
        }
        entries = []
        while !r.isEmpty {
            let handle = try r.readLE16("handle")
            let end = try r.readLE16("end group handle")
            entries.append(Entry(handle: handle, groupEndHandle: end, value: Array(try r.readBytes(length - 4, "value"))))
        }
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
        for entry in entries {
            bytes.appendLE16(entry.handle)
            bytes.appendLE16(entry.groupEndHandle)
            bytes.append(contentsOf: entry.value)
        }
    }
}
