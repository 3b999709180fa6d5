/// Little-endian writers for building PDUs into a byte array the caller owns and may reuse.
extension Array where Element == UInt8 {
    @inlinable public mutating func appendU8(_ value: UInt8) { append(value) }
    @inlinable public mutating func appendI8(_ value: Int8) { append(UInt8(bitPattern: value)) }

    @inlinable
    public mutating func appendLE16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inlinable
    public mutating func appendLE24(_ value: UInt32) {
        for k in 0..<3 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(k)))) }
    }

    @inlinable
    public mutating func appendLE32(_ value: UInt32) {
        for k in 0..<4 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(k)))) }
    }

    @inlinable
    public mutating func appendLE64(_ value: UInt64) {
        for k in 0..<8 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(k)))) }
    }

    @inlinable
    public mutating func appendBE32(_ value: UInt32) {
        for k in (0..<4).reversed() { append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(k)))) }
    }

    @inlinable
    public mutating func appendBE64(_ value: UInt64) {
        for k in (0..<8).reversed() { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(k)))) }
    }
}
