/// One HCI packet with its H4 type: the unit every transport carries in both directions.
public struct H4Packet: Hashable, Sendable, CustomStringConvertible {
    public var type: H4PacketType
    /// The HCI packet after the type byte: header (opcode/handle/event code, length) and parameters.
    public var body: [UInt8]

    public init(type: H4PacketType, body: [UInt8]) {
        self.type = type
        self.body = body
    }

    /// Type byte followed by the body, as written to an H4 stream or a user-channel socket.
    public var wireBytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(body.count + 1)
        out.append(type.rawValue)
        out.append(contentsOf: body)
        return out
    }

    /// Parses one packet that arrived on its own (a user-channel socket read, a btsnoop record):
    /// the bytes must hold exactly one complete packet whose header length matches.
    public init(datagram bytes: ArraySlice<UInt8>, maximumBodyLength: Int = H4Framer.defaultMaximumBodyLength)
        throws(H4FramingError)
    {
        var framer = H4Framer(maximumBodyLength: maximumBodyLength)
        framer.append(bytes)
        guard let packet = try framer.next() else {
            throw H4FramingError.truncated(available: bytes.count)
        }
        guard framer.bufferedByteCount == 0 else {
            throw H4FramingError.trailingBytes(count: framer.bufferedByteCount)
        }
        self = packet
    }

    public var description: String { "\(type) \(Hex.encode(body))" }
}
