/// A Bluetooth UUID, always held as 128 bits. 16- and 32-bit UUIDs are aliases in the
/// Bluetooth base UUID `0000xxxx-0000-1000-8000-00805F9B34FB`; `shortValue` recovers them.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The 128 bits, most significant half first, as written in text.
    public var high: UInt64
    public var low: UInt64

    static let baseHigh: UInt64 = 0x0000_0000_0000_1000
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init(_ short: UInt16) { self.init(UInt32(short)) }

    public init(_ short: UInt32) {
        self.high = UInt64(short) << 32 | Self.baseHigh
        self.low = Self.baseLow
    }

    /// Parses `FCF6`, `0xFCF6`, `0000fcf6` or the full 36-character form.
    public init?(_ text: some StringProtocol) {
        var s = String(text)
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s.removeFirst(2) }
        switch s.count {
        case 4:
            guard let v = UInt16(s, radix: 16) else { return nil }
            self.init(v)
        case 8:
            guard let v = UInt32(s, radix: 16) else { return nil }
            self.init(v)
        case 36:
            let groups = s.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
            let hex = groups.joined()
            guard hex.allSatisfy(\.isHexDigit),
                let h = UInt64(hex.prefix(16), radix: 16),
                let l = UInt64(hex.suffix(16), radix: 16)
            else { return nil }
            self.init(high: h, low: l)
        default:
            return nil
        }
    }

    /// From wire bytes: 2, 4 or 16 bytes, least significant first.
    public init<C: Collection>(littleEndianBytes bytes: C) throws(DecodeError) where C.Element == UInt8 {
        var value: (UInt64, UInt64) = (0, 0)
        switch bytes.count {
        case 2, 4:
            var v: UInt32 = 0
            for (k, b) in bytes.enumerated() { v |= UInt32(b) << (8 * UInt32(k)) }
            self.init(v)
            return
        case 16:
            for (k, b) in bytes.enumerated() {
                if k < 8 { value.1 |= UInt64(b) << (8 * UInt64(k)) } else { value.0 |= UInt64(b) << (8 * UInt64(k - 8)) }
            }
            self.init(high: value.0, low: value.1)
        default:
            throw DecodeError(.lengthMismatch, field: "uuid", detail: "\(bytes.count) bytes; a UUID is 2, 4 or 16")
        }
    }

    /// The 16-bit alias, if this UUID is in the base range and fits.
    public var shortValue: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh, high >> 32 <= 0xFFFF else { return nil }
        return UInt16(high >> 32)
    }

    /// The 32-bit alias, if this UUID is in the base range.
    public var shortValue32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHigh else { return nil }
        return UInt32(high >> 32)
    }

    /// The 16 wire bytes, least significant first.
    public var littleEndianBytes128: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        out.appendLE64(low)
        out.appendLE64(high)
        return out
    }

    /// The shortest wire form allowed in ATT (2 bytes for 16-bit aliases, otherwise 16 bytes).
    public func appendShortestForm(to bytes: inout [UInt8]) {
        if let short = shortValue {
            bytes.appendLE16(short)
        } else {
            bytes.appendLE64(low)
            bytes.appendLE64(high)
        }
    }

    /// Number of bytes ``appendShortestForm(to:)`` writes.
    public var shortestFormSize: Int { shortValue == nil ? 16 : 2 }

    /// `FCF6` for 16-bit aliases, the full lowercase form otherwise.
    public var description: String {
        if let short = shortValue {
            let hex = String(short, radix: 16, uppercase: true)
            return String(repeating: "0", count: 4 - hex.count) + hex
        }
        return fullString
    }

    /// Always the 36-character form, lowercase.
    public var fullString: String {
        let hex = Hex.encode(
            [UInt8]((0..<8).map { UInt8(truncatingIfNeeded: high >> (8 * UInt64(7 - $0))) })
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (8 * UInt64(7 - $0))) })
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }
}
