import BLEHost

/// The pseudo device address a Herald Android phone advertises in manufacturer data (`0x05F1`,
/// legacy `0xFFFA`) so that scanners can follow it across Bluetooth address rotations.
///
/// Herald draws a random Int64, writes it as 8 bytes little-endian and advertises bytes 2–7, i.e.
/// bits 16–63; a reader prepends two zero bytes and reads an Int64 little-endian. Held here as the
/// six advertised bytes read as a 48-bit little-endian integer (no allocation, cheap to hash).
public struct PseudoDeviceAddress: WordHashable, Sendable, CustomStringConvertible {
    /// The six advertised bytes, first byte least significant.
    public var rawValue: UInt64
    public var hashWord: UInt64 { rawValue }

    public static let size = 6

    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// From Herald's Int64 value; its low 16 bits are not advertised and are dropped.
    public init(int64: Int64) { self.init(rawValue: UInt64(bitPattern: int64) >> 16) }

    /// Herald's Int64 value (the advertised bits in 16–63, zeros below).
    public var int64Value: Int64 { Int64(bitPattern: rawValue << 16) }

    /// From the six advertised bytes.
    public init<C: Collection>(bytes: C) throws(DecodeError) where C.Element == UInt8 {
        guard bytes.count == Self.size else {
            throw DecodeError(.lengthMismatch, field: "pseudo device address", detail: "\(bytes.count) bytes; it is 6")
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for b in bytes {
            value |= UInt64(b) << shift
            shift += 8
        }
        self.rawValue = value
    }

    /// From manufacturer-specific data (after the company ID) of a company that carries it, taking
    /// its first six bytes as Herald for iOS does; nil when the company is not Herald's or there are
    /// fewer than six bytes. Allocation-free: the advert classifier calls it per report.
    public init?(companyID: UInt16, data: ArraySlice<UInt8>) {
        guard companyID == HeraldUUIDs.manufacturerID || companyID == HeraldUUIDs.legacyManufacturerID,
            data.count >= Self.size
        else { return nil }
        var value: UInt64 = 0
        let start = data.startIndex
        for k in 0..<Self.size { value |= UInt64(data[start + k]) << (8 * UInt64(k)) }
        self.rawValue = value
    }

    /// The six advertised bytes.
    public var bytes: [UInt8] {
        var out = [UInt8]()
        append(to: &out)
        return out
    }

    public func append(to bytes: inout [UInt8]) {
        for k in 0..<Self.size { bytes.append(UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(k)))) }
    }

    /// The advertised bytes in hex, in wire order.
    public var description: String { Hex.encode(bytes) }
}
