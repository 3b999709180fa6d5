/// Splits an outgoing L2CAP frame into ACL packets that fit the controller's buffers.
public enum ACLFragmenter {
    /// The H4 ACL packets (type byte 0x02 included) carrying `payload` on `channel` of the link
    /// `handle`: the L2CAP basic header is added, the frame is cut into pieces of at most
    /// `maximumDataLength` bytes (the controller's ACL data length, from LE Read Buffer Size),
    /// the first marked "first, non-flushable" (0b00), the rest "continuing" (0b01).
    ///
    /// The caller makes sure the payload fits an L2CAP frame (≤ 65535 bytes, in practice the
    /// ATT MTU); a `maximumDataLength` below 1 is treated as 1.
    public static func fragment(
        handle: UInt16, channel: L2CAPChannelID, payload: some Collection<UInt8>, maximumDataLength: Int
    ) -> [[UInt8]] {
        var frame: [UInt8] = []
        frame.reserveCapacity(L2CAPHeader.size + payload.count)
        L2CAPHeader(length: UInt16(truncatingIfNeeded: payload.count), channel: channel).append(to: &frame)
        frame.append(contentsOf: payload)

        let size = max(1, min(maximumDataLength, Int(UInt16.max)))
        var packets: [[UInt8]] = []
        packets.reserveCapacity((frame.count + size - 1) / size)
        var offset = 0
        while offset < frame.count {
            let end = min(offset + size, frame.count)
            var packet: [UInt8] = [0x02]
            packet.reserveCapacity(1 + ACLHeader.size + end - offset)
            ACLHeader(
                handle: handle, boundary: offset == 0 ? .firstNonFlushable : .continuing, length: UInt16(end - offset)
            ).append(to: &packet)
            packet.append(contentsOf: frame[offset..<end])
            packets.append(packet)
            offset = end
        }
        return packets
    }
}
