/// Find By Type Value Request (0x06): attributes of a 16-bit type whose value equals `value`;
/// with type 0x2800 this discovers a primary service by its UUID.
public struct ATTFindByTypeValueRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.findByTypeValueRequest
    public var startHandle: UInt16
    public var endHandle: UInt16
    public var attributeType: UInt16
    public var value: [UInt8]

    public init(startHandle: UInt16, endHandle: UInt16, attributeType: UInt16, value: [UInt8]) {
        self.startHandle = startHandle
        self.endHandle = endHandle
        self.attributeType = attributeType
        self.value = value
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        startHandle = try r.readLE16("starting handle")
        endHandle = try r.readLE16("ending handle")
        attributeType = try r.readLE16("attribute type")
        value = Array(r.readRest())
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(startHandle)
        bytes.appendLE16(endHandle)
        bytes.appendLE16(attributeType)
        bytes.append(contentsOf: value)
    }
}

/// Find By Type Value Response (0x07): for each match, its handle and the end of its group (for
/// a service, the last handle of the service).
public struct ATTFindByTypeValueResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.findByTypeValueResponse

    public struct Entry: Hashable, Sendable {
        public var foundHandle: UInt16
        public var groupEndHandle: UInt16
        public init(foundHandle: UInt16, groupEndHandle: UInt16) {
            self.foundHandle = foundHandle
            self.groupEndHandle = groupEndHandle
        }
    }

    /// At least one entry.
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        guard !r.isEmpty, r.remaining % 4 == 0 else {
            throw DecodeError(.lengthMismatch, field: "handles information", detail: "\(r.remaining) bytes in entries of 4")
        }
        entries = []
        while !r.isEmpty {
            let found = try r.readLE16("found handle")
            entries.append(Entry(foundHandle: found, groupEndHandle: try r.readLE16("group end handle")))
        }
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        for entry in entries {
            bytes.appendLE16(entry.foundHandle)
            bytes.appendLE16(entry.groupEndHandle)
        }
    }
}
