/// A 48-bit Bluetooth device address. Stored as an integer (no allocation, cheap to hash);
/// on the wire it is six bytes, least significant first; as text it is `AA:BB:CC:DD:EE:FF`,
/// most significant first.
public struct BluetoothAddress: WordHashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt64
    public var hashWord: UInt64 { rawValue }

    public init(rawValue: UInt64) { self.rawValue = rawValue & 0xFFFF_FFFF_FFFF }

    /// From the six wire bytes (least significant first).
    public init<C: Collection>(littleEndianBytes bytes: C) where C.Element == UInt8 {
        precondition(bytes.count == 6, "a Bluetooth address is 6 bytes")
        var value: UInt64 = 0
        for (k, b) in bytes.enumerated() { value |= UInt64(b) << (8 * UInt64(k)) }
        self.rawValue = value
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (case-insensitive). Returns nil for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            value = value << 8 | UInt64(byte)
        }
        self.rawValue = value
    }

    /// The six wire bytes, least significant first.
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) }
    }

    public func append(to bytes: inout [UInt8]) {
        for k in 0..<6 { bytes.append(UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(k)))) }
    }

    public var description: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(17)
        for k in (0..<6).reversed() {
            let b = UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64(k)))
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
            if k > 0 { out.append(UInt8(ascii: ":")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The two most significant bits of a random address say what kind it is.
    public var randomAddressKind: RandomAddressKind {
        switch rawValue >> 46 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    public enum RandomAddressKind: Sendable { case staticAddress, resolvablePrivate, nonResolvablePrivate, reserved }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

extension ByteReader {
    @inlinable
    public mutating func readAddress(_ field: StaticString = "address") throws(DecodeError) -> BluetoothAddress {
        let bytes = try readBytes(6, field)
        return BluetoothAddress(littleEndianBytes: bytes)
    }
}

/// LE address type as carried in HCI (open: unknown codes survive a round trip).
public struct AddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let `public` = AddressType(rawValue: 0x00)
    public static let random = AddressType(rawValue: 0x01)
    public static let publicIdentity = AddressType(rawValue: 0x02)
    public static let randomIdentity = AddressType(rawValue: 0x03)

    public var description: String {
        switch rawValue {
        case 0: return "public"
        case 1: return "random"
        case 2: return "public-identity"
        case 3: return "random-identity"
        default: return "type-\(rawValue)"
        }
    }
}
