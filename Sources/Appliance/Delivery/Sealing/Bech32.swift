/// Bech32 (BIP 173, the original checksum constant, not bech32m): how age writes its keys,
/// `age1…` for a public key and `AGE-SECRET-KEY-1…` for a secret key. Pure; no length limit
/// (age's keys are longer than BIP 173's 90 characters allow for secret keys with long HRPs).
public enum Bech32 {
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case mixedCase, noSeparator, badCharacter(Character), badChecksum, badPadding

        public var description: String {
            switch self {
            case .mixedCase: "mixes upper and lower case"
            case .noSeparator: "has no \"1\" separating its prefix from its data"
            case .badCharacter(let c): "contains \"\(c)\", which bech32 does not use"
            case .badChecksum: "has a wrong checksum (a typing mistake?)"
            case .badPadding: "has a data part of impossible length"
            }
        }
    }

    static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    /// `hrp` (lower case) + "1" + the data in 5-bit groups + six checksum characters.
    public static func encode(hrp: String, data: [UInt8]) -> String {
        let hrpBytes = Array(hrp.lowercased().utf8)
        let values = regroup(data, from: 8, to: 5, pad: true) ?? []
        let mod = polymod(expand(hrpBytes) + values + [0, 0, 0, 0, 0, 0]) ^ 1
        let checksum = (0..<6).map { UInt8((mod >> (5 * (5 - UInt32($0)))) & 31) }
        return hrp.lowercased() + "1" + String(decoding: (values + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
    }

    /// The prefix (lower case) and the data bytes, checksum verified.
    public static func decode(_ text: String) -> Result<(hrp: String, data: [UInt8]), Problem> {
        let bytes = Array(text.utf8)
        let hasLower = bytes.contains { $0 >= 0x61 && $0 <= 0x7A }
        let hasUpper = bytes.contains { $0 >= 0x41 && $0 <= 0x5A }
        if hasLower && hasUpper { return .failure(.mixedCase) }
        let lower = bytes.map { ($0 >= 0x41 && $0 <= 0x5A) ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")), separator > 0, lower.count - separator - 1 >= 6 else {
            return .failure(.noSeparator)
        }
        let hrp = Array(lower[..<separator])
        if let bad = hrp.first(where: { $0 < 33 || $0 > 126 }) { return .failure(.badCharacter(Character(UnicodeScalar(bad)))) }
        var values: [UInt8] = []
        for byte in lower[(separator + 1)...] {
            guard let index = alphabet.firstIndex(of: byte) else { return .failure(.badCharacter(Character(UnicodeScalar(byte)))) }
            values.append(UInt8(index))
        }
        guard polymod(expand(hrp) + values) == 1 else { return .failure(.badChecksum) }
        guard let data = regroup(Array(values.dropLast(6)), from: 5, to: 8, pad: false) else { return .failure(.badPadding) }
        return .success((String(decoding: hrp, as: UTF8.self), data))
    }

    static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
        var check: UInt32 = 1
        for value in values {
            let top = check >> 25
            check = ((check & 0x1ff_ffff) << 5) ^ UInt32(value)
            for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { check ^= generator[i] }
        }
        return check
    }

    static func expand(_ hrp: [UInt8]) -> [UInt8] { hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 } }

    /// Regroups bits; without `pad`, leftover bits must be fewer than `from` and all zero.
    static func regroup(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0, bits = 0
        var out: [UInt8] = []
        let mask = (1 << to) - 1
        for value in data {
            accumulator = (accumulator << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((accumulator >> bits) & mask))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((accumulator << (to - bits)) & mask)) }
        } else if bits >= from || accumulator != 0 {
            return nil
        }
        return out
    }
}
