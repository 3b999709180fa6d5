/// Find Information Request (0x04): handles and types of all attributes in a range (descriptor
/// discovery).
public struct ATTFindInformationRequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.findInformationRequest
    public var startHandle: UInt16
    public var endHandle: UInt16

    public init(startHandle: UInt16, endHandle: UInt16) {
        self.startHandle = startHandle
        self.endHandle = endHandle
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        startHandle = try r.readLE16("starting handle")
        endHandle = try r.readLE16("ending handle")
        try r.expectEnd("find information request")
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.appendLE16(startHandle)
        bytes.appendLE16(endHandle)
    }
}

/// Find Information Response (0x05): (handle, type) pairs, all with 16-bit types (format 1) or
/// all with 128-bit types (format 2).
public struct ATTFindInformationResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.findInformationResponse

    public struct Format: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Handle + 16-bit UUID.
        public static let uuid16 = Format(rawValue: 1)
        /// Handle + 128-bit UUID.
        public static let uuid128 = Format(rawValue: 2)
        var uuidSize: Int { self == .uuid16 ? 2 : 16 }
    }

    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    public var format: Format
    /// At least one entry. In format 1 each type is written as its 16-bit field
    /// (`0000xxxx-…`); the server only puts 16-bit aliases there.
    public var entries: [Entry]

    public init(format: Format, entries: [Entry]) {
        self.format = format
        self.entries = entries
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        format = Format(rawValue: try r.readU8("format"))
        guard format == .uuid16 || format == .uuid128 else {
            throw DecodeError(.invalidValue, field: "format", detail: "\(format.rawValue); expected 1 or 2")
        }
        let size = 2 + format.uuidSize
        guard !r.isEmpty, r.remaining % size == 0 else {
            throw DecodeError(.lengthMismatch, field: "information data", detail: "\(r.remaining) bytes in entries of \(size)")
        }
        entries = []
        while !r.isEmpty {
            let handle = try r.readLE16("handle")
            entries.append(Entry(handle: handle, type: try r.readATTUUID(size: format.uuidSize, "uuid")))
        }
    }

    public func appendParameters(to bytes: inout [UInt8]) {
        bytes.append(format.rawValue)
        for entry in entries {
            bytes.appendLE16(entry.handle)
            if format == .uuid16 {
                bytes.appendLE16(UInt16(truncatingIfNeeded: entry.type.high >> 32))
            } else {
                bytes.append(contentsOf: entry.type.littleEndianBytes128)
            }
        }
    }
}
