/// ACL Packet_Boundary_Flag (2 bits). Open.
public struct ACLPacketBoundary: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0b11 }

    /// Host → controller: first fragment of a non-flushable L2CAP frame (what LE uses).
    public static let firstNonFlushable = ACLPacketBoundary(rawValue: 0b00)
    /// Either direction: a continuation fragment.
    public static let continuing = ACLPacketBoundary(rawValue: 0b01)
    /// Controller → host: first fragment of an L2CAP frame.
    public static let first = ACLPacketBoundary(rawValue: 0b10)
    /// A complete automatically-flushable L2CAP PDU (not used on LE).
    public static let complete = ACLPacketBoundary(rawValue: 0b11)

    public var description: String {
        switch rawValue {
        case 0b00: return "first (non-flushable)"
        case 0b01: return "continuing"
        case 0b10: return "first"
        default: return "complete"
        }
    }
}

/// The 4-byte ACL data header: handle (12 bits), PB flag (2), BC flag (2), data length (u16).
public struct ACLHeader: Hashable, Sendable {
    public static let size = 4

    public var handle: UInt16
    public var boundary: ACLPacketBoundary
    /// Broadcast flag; 0 on LE.
    public var broadcast: UInt8
    public var length: UInt16

    public init(handle: UInt16, boundary: ACLPacketBoundary, broadcast: UInt8 = 0, length: UInt16) {
        self.handle = handle & 0x0FFF
        self.boundary = boundary
        self.broadcast = broadcast & 0b11
        self.length = length
    }

    public init(from r: inout ByteReader) throws(DecodeError) {
        let word = try r.readLE16("ACL handle and flags")
        let length = try r.readLE16("ACL data length")
        self.init(
            handle: word & 0x0FFF, boundary: ACLPacketBoundary(rawValue: UInt8(word >> 12 & 0b11)),
            broadcast: UInt8(word >> 14), length: length)
    }

    public func append(to bytes: inout [UInt8]) {
        bytes.appendLE16(handle & 0x0FFF | UInt16(boundary.rawValue) << 12 | UInt16(broadcast) << 14)
        bytes.appendLE16(length)
    }
}

/// One ACL data packet: header and data. `data` shares the storage of the decoded bytes.
public struct ACLPacket: Hashable, Sendable {
    public var header: ACLHeader
    public var data: ArraySlice<UInt8>

    public init(header: ACLHeader, data: ArraySlice<UInt8>) {
        self.header = header
        self.data = data
    }

    /// Decodes an ACL packet without its H4 type byte. The header length must match the data.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(bytes)
        header = try ACLHeader(from: &r)
        let length = Int(header.length)
        if r.remaining != length {
            let kind: DecodeError.Kind = r.remaining < length ? .truncated : .lengthMismatch
            throw DecodeError(kind, field: "ACL data", detail: "length says \(length), \(r.remaining) present")
        }
        data = r.readRest()
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) { try self.init(decoding: bytes[...]) }

    /// The H4 packet: type byte 0x02, header, data.
    public var h4Packet: [UInt8] {
        var out: [UInt8] = [0x02]
        out.reserveCapacity(1 + ACLHeader.size + data.count)
        header.append(to: &out)
        out.append(contentsOf: data)
        return out
    }
}
