/// Why bytes could not be framed as H4 packets. On a stream, any of these means framing is lost:
/// the transport reports it, and the owner closes and reopens the controller.
public enum H4FramingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The type byte is not one whose header length is known (0x01–0x05).
    case unknownPacketType(UInt8)
    /// The header announces more parameter bytes than the framer accepts.
    case oversizedPacket(type: H4PacketType, length: Int, maximum: Int)
    /// A datagram ended before the packet its header announces.
    case truncated(available: Int)
    /// A datagram carried bytes after its packet.
    case trailingBytes(count: Int)

    public var description: String {
        switch self {
        case .unknownPacketType(let byte):
            return "unknown H4 packet type 0x\(Hex.encode([byte])): the stream lost framing"
        case .oversizedPacket(let type, let length, let maximum):
            return "H4 \(type) packet announces \(length) bytes (at most \(maximum) accepted): the stream lost framing"
        case .truncated(let available):
            return "H4 packet truncated after \(available) bytes"
        case .trailingBytes(let count):
            return "H4 packet followed by \(count) unexpected bytes"
        }
    }
}
