/// Cuts a byte stream (H4 over a unix or TCP socket, a serial line) into HCI packets by their
/// header lengths. Pure: feed it whatever arrived with ``append(_:)``, then call ``next()`` until it
/// returns nil ("need more bytes"). A thrown error means framing is lost for good: the stream can
/// no longer be trusted and must be closed and reopened; the framer keeps throwing the same error.
public struct H4Framer: Sendable {
    /// Largest parameter length accepted by default. Above every LE ACL buffer seen (btvirt 192,
    /// Pi controllers ≤ 1021) and every ISO SDU a host like ours would see; larger values only come
    /// from a stream that lost framing.
    public static let defaultMaximumBodyLength = 4096

    public let maximumBodyLength: Int
    private var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte not yet returned as part of a packet.
    private var start = 0
    private var failure: H4FramingError?

    public init(maximumBodyLength: Int = H4Framer.defaultMaximumBodyLength) {
        self.maximumBodyLength = maximumBodyLength
    }

    /// Bytes received but not yet returned as a packet.
    public var bufferedByteCount: Int { buffer.count - start }

    /// What arrived: a transport's read buffer, once a read (not a generic collection: a generic
    /// call across modules copies byte by byte, on the hot path).
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        // Drop consumed bytes before growing, so the buffer stays about one packet long.
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 4096 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        append(bytes[...])
    }

    /// The next complete packet, nil when more bytes are needed.
    public mutating func next() throws(H4FramingError) -> H4Packet? {
        if let failure { throw failure }
        guard start < buffer.count else { return nil }
        let type = H4PacketType(rawValue: buffer[start])
        guard let headerSize = type.headerSize else {
            return try fail(.unknownPacketType(type.rawValue))
        }
        let bodyStart = start + 1
        guard buffer.count - bodyStart >= headerSize else { return nil }
        let length = type.parameterLength(header: buffer[bodyStart..<bodyStart + headerSize])
        guard length <= maximumBodyLength else {
            return try fail(.oversizedPacket(type: type, length: length, maximum: maximumBodyLength))
        }
        let end = bodyStart + headerSize + length
        guard buffer.count >= end else { return nil }
        let packet = H4Packet(type: type, body: Array(buffer[bodyStart..<end]))
        start = end
        return packet
    }

    private mutating func fail(_ error: H4FramingError) throws(H4FramingError) -> H4Packet? {
        failure = error
        throw error
    }
}
