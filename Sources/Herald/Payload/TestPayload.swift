/// Herald's demo test payload (`TestPayloadDataSupplier` in the iOS and Android demos): 129 bytes,
/// `0x00`, `0x0000`, an Int32 identifier little-endian at bytes 3–6, zero padding. The payload
/// size Herald's published performance figures are measured with; simulated phones use it.
public enum TestPayload {
    public static let size = 129

    public static func make(identifier: Int32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        let value = UInt32(bitPattern: identifier)
        for k in 0..<4 { bytes[3 + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
        return bytes
    }

    /// The identifier of a payload in this format; nil for anything else.
    public static func identifier<C: Collection>(of payload: C) -> Int32? where C.Element == UInt8, C.Index == Int {
        guard payload.count == size else { return nil }
        let start = payload.startIndex
        guard payload[start] == 0, payload[start + 1] == 0, payload[start + 2] == 0 else { return nil }
        var value: UInt32 = 0
        for k in 0..<4 { value |= UInt32(payload[start + 3 + k]) << (8 * UInt32(k)) }
        return Int32(bitPattern: value)
    }
}
