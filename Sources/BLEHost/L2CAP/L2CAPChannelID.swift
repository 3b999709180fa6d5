/// An L2CAP channel identifier. Open. LE uses fixed channels for ATT, signalling and SMP.
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let att = L2CAPChannelID(rawValue: 0x0004)
    public static let leSignalling = L2CAPChannelID(rawValue: 0x0005)
    public static let smp = L2CAPChannelID(rawValue: 0x0006)

    public var description: String {
        switch rawValue {
        case 0x0004: return "ATT"
        case 0x0005: return "LE signalling"
        case 0x0006: return "SMP"
        default: return "CID 0x" + Hex.encode([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
        }
    }
}

/// The L2CAP basic header: payload length (u16) and channel (u16).
public struct L2CAPHeader: Hashable, Sendable {
    public static let size = 4
    public var length: UInt16
    public var channel: L2CAPChannelID

    public init(length: UInt16, channel: L2CAPChannelID) {
        self.length = length
        self.channel = channel
    }

    public init(from r: inout ByteReader) throws(DecodeError) {
        length = try r.readLE16("L2CAP length")
        channel = L2CAPChannelID(rawValue: try r.readLE16("L2CAP channel"))
    }

    public func append(to bytes: inout [UInt8]) {
        bytes.appendLE16(length)
        bytes.appendLE16(channel.rawValue)
    }
}

/// A complete L2CAP frame received on a link: the channel and its payload (without header).
public struct L2CAPFrame: Hashable, Sendable {
    public var handle: UInt16
    public var channel: L2CAPChannelID
    public var payload: ArraySlice<UInt8>

    public init(handle: UInt16, channel: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        self.handle = handle
        self.channel = channel
        self.payload = payload
    }
}
