/// Splitting and building the concatenated payloads of a payload-sharing write (`0x03`).
///
/// The payload lengths are not on the wire. Herald's default supplier splits by the length of the
/// receiving app's *own* payload, because every phone of one app has payloads of one fixed length
/// (herald-for-ios `PayloadDataSupplier.payload(_ data:)`). This node's rule:
/// - **Receiving:** split by the writer's own payload length when the node has read it (the
///   writer shares payloads of its own app); otherwise by a known fixed-length format the data is
///   a whole number of (129-byte test payloads, 21-byte simple payloads). Anything else cannot be
///   split safely and is not recorded: a wrong split would record phantom phones.
/// - **Sending to an iPhone:** only payloads of that iPhone's own payload length, so that its
///   default splitter recovers them exactly.
public enum SharedPayloads {
    /// An attribute value is at most 512 bytes (ATT); the write's header takes 5.
    public static let maximumConcatenatedBytes = 512 - 5

    /// Consecutive payloads of `payloadLength` bytes; a trailing partial payload is dropped, as
    /// Herald drops it. Empty for a length below 1.
    public static func split(_ data: ArraySlice<UInt8>, payloadLength: Int) -> [ArraySlice<UInt8>] {
        guard payloadLength > 0 else { return [] }
        var out = [ArraySlice<UInt8>]()
        out.reserveCapacity(data.count / payloadLength)
        var start = data.startIndex
        while data.endIndex - start >= payloadLength {
            out.append(data[start..<start + payloadLength])
            start += payloadLength
        }
        return out
    }

    /// The payload length of a known fixed-length format that `data` is a whole number of, judged
    /// by its first byte; nil when there is none.
    public static func inferredPayloadLength(_ data: ArraySlice<UInt8>) -> Int? {
        guard let first = data.first else { return nil }
        if first == 0x00, data.count % TestPayload.size == 0 { return TestPayload.size }
        if PayloadFormat(classifying: data) == .simple, data.count % PayloadFormat.simplePayloadSize == 0 {
            return PayloadFormat.simplePayloadSize
        }
        return nil
    }

    /// Splits a received sharing write by the rule above: `writerPayloadLength` (the length of
    /// the writer's own payload, if known) first, else a known format; nil when neither applies.
    public static func split(_ data: ArraySlice<UInt8>, writerPayloadLength: Int?) -> [ArraySlice<UInt8>]? {
        if let length = writerPayloadLength, length > 0, data.count % length == 0 {
            return split(data, payloadLength: length)
        }
        guard let length = inferredPayloadLength(data) else { return nil }
        return split(data, payloadLength: length)
    }

    /// The concatenation to write to a phone whose own payload is `length` bytes: the payloads of
    /// that length, in order, as many as fit in one attribute value.
    public static func concatenate(_ payloads: [[UInt8]], length: Int, maximumBytes: Int = maximumConcatenatedBytes) -> [UInt8] {
        guard length > 0 else { return [] }
        var out = [UInt8]()
        for payload in payloads where payload.count == length {
            guard out.count + length <= maximumBytes else { break }
            out.append(contentsOf: payload)
        }
        return out
    }
}
