/// Disconnection Complete (0x05).
public struct DisconnectionComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    public var reason: HCIStatus

    public init(status: HCIStatus = .success, handle: UInt16, reason: HCIStatus) {
        self.status = status
        self.handle = handle
        self.reason = reason
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        status = HCIStatus(rawValue: try r.readU8("Status"))
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        reason = HCIStatus(rawValue: try r.readU8("Reason"))
    }
}

/// Encryption Change (0x08). This host never pairs; it sees this only if a peer insists.
public struct EncryptionChange: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    public var enabled: UInt8

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        status = HCIStatus(rawValue: try r.readU8("Status"))
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        enabled = try r.readU8("Encryption_Enabled")
    }
}

/// Number Of Completed Packets (0x13): ACL buffers the controller freed, per handle. Iterate it
/// for `(handle, count)` pairs; no allocation.
public struct NumberOfCompletedPackets: Hashable, Sendable, Sequence {
    /// The `(handle u16, count u16)` pairs, validated at decode.
    public let entries: ArraySlice<UInt8>

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        let count = Int(try r.readU8("Num_Handles"))
        entries = try r.readBytes(4 * count, "handles and counts")
        try r.expectEnd("Number Of Completed Packets")
    }

    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var completedPackets: UInt16
    }

    public struct Iterator: IteratorProtocol {
        var reader: ByteReader
        public mutating func next() -> Entry? {
            guard let handle = try? reader.readLE16(), let count = try? reader.readLE16() else { return nil }
            return Entry(handle: handle & 0x0FFF, completedPackets: count)
        }
    }

    public func makeIterator() -> Iterator { Iterator(reader: ByteReader(entries)) }
    public var underestimatedCount: Int { entries.count / 4 }
}

extension DisconnectionComplete {
    public var packet: H4Packet {
        var p: [UInt8] = [status.rawValue]
        p.appendLE16(handle & 0x0FFF)
        p.append(reason.rawValue)
        return HCIEventCode.disconnectionComplete.packet(parameters: p)
    }
}

extension NumberOfCompletedPackets {
    /// From `(handle, count)` entries; at most 63 fit one event.
    public init(_ completed: [Entry]) {
        var bytes: [UInt8] = []
        for entry in completed.prefix(63) {
            bytes.appendLE16(entry.handle & 0x0FFF)
            bytes.appendLE16(entry.completedPackets)
        }
        entries = bytes[...]
    }

    public var packet: H4Packet {
        var p: [UInt8] = [UInt8(entries.count / 4)]
        p.append(contentsOf: entries)
        return HCIEventCode.numberOfCompletedPackets.packet(parameters: p)
    }
}

extension NumberOfCompletedPackets.Entry {
    public init(handle: UInt16, count: UInt16) {
        self.handle = handle
        self.completedPackets = count
    }
}
