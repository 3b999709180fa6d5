/// One packet record in a btsnoop file: 24-byte big-endian header, then the captured bytes.
public struct BTSnoopRecord: Hashable, Sendable {
    public static let headerSize = 24

    /// Length of the packet as it was on the wire (may exceed `data.count` if truncated on capture).
    public var originalLength: UInt32
    public var flags: Flags
    /// Packets lost since the previous record.
    public var drops: UInt32
    public var timestamp: BTSnoopTimestamp
    /// The captured bytes (for datalink 1002: H4 type byte first).
    public var data: [UInt8]

    public init(originalLength: UInt32, flags: Flags, drops: UInt32 = 0, timestamp: BTSnoopTimestamp, data: [UInt8]) {
        self.originalLength = originalLength
        self.flags = flags
        self.drops = drops
        self.timestamp = timestamp
        self.data = data
    }

    /// An H4 (datalink 1002) record for a packet that went `direction` at `timestamp`.
    public init(packet: H4Packet, direction: H4Direction, timestamp: BTSnoopTimestamp) {
        let data = packet.wireBytes
        self.init(
            originalLength: UInt32(data.count), flags: Flags(packetType: packet.type, direction: direction),
            timestamp: timestamp, data: data)
    }

    public func append(to bytes: inout [UInt8]) {
        bytes.appendBE32(originalLength)
        bytes.appendBE32(UInt32(data.count))
        bytes.appendBE32(flags.rawValue)
        bytes.appendBE32(drops)
        bytes.appendBE64(UInt64(bitPattern: timestamp.rawValue))
        bytes.append(contentsOf: data)
    }

    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.headerSize + data.count)
        append(to: &out)
        return out
    }

    /// Reads one record; nil when the reader is empty (end of file). A record cut short (a capture
    /// whose writer died mid-record) throws `.truncated`.
    public static func read(from reader: inout ByteReader) throws(DecodeError) -> BTSnoopRecord? {
        guard !reader.isEmpty else { return nil }
        var r = reader
        let originalLength = try r.readBE32("btsnoop.record.originalLength")
        let includedLength = try r.readBE32("btsnoop.record.includedLength")
        let flags = Flags(rawValue: try r.readBE32("btsnoop.record.flags"))
        let drops = try r.readBE32("btsnoop.record.drops")
        let high = UInt64(try r.readBE32("btsnoop.record.timestamp"))
        let low = UInt64(try r.readBE32("btsnoop.record.timestamp"))
        let data = try r.readBytes(Int(includedLength), "btsnoop.record.data")
        reader = r
        return BTSnoopRecord(
            originalLength: originalLength, flags: flags, drops: drops,
            timestamp: BTSnoopTimestamp(rawValue: Int64(bitPattern: high << 32 | low)), data: Array(data))
    }

    /// Record flags for datalinks 1001/1002: bit 0 = received (controller to host), bit 1 =
    /// command or event (clear for data packets).
    public struct Flags: OptionSet, Hashable, Sendable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let received = Flags(rawValue: 1 << 0)
        public static let commandOrEvent = Flags(rawValue: 1 << 1)

        public init(packetType: H4PacketType, direction: H4Direction) {
            self = direction == .received ? .received : []
            if packetType == .command || packetType == .event { insert(.commandOrEvent) }
        }

        public var direction: H4Direction { contains(.received) ? .received : .sent }
    }
}
