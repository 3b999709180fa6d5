import CCryptoBoringSSL
import Crypto
import Foundation

/// The Exposure Notification cryptography (Apple and Google, "Exposure Notification
/// Cryptography Specification" v1.2), as far as a venue needs it to recognise a diagnosis key's
/// identifiers:
///
/// - RPIK = HKDF-SHA256(TEK, salt NULL, info "EN-RPIK", 16 bytes)
/// - RPIᵢ = AES-128(RPIK, "EN-RPI" ‖ 0x000000000000 ‖ ENIntervalNumberᵢ as uint32 little-endian)
/// - AEMK = HKDF-SHA256(TEK, salt NULL, info "EN-AEMK", 16 bytes)
/// - AEM = AES-128-CTR(AEMK, IV = RPI, metadata): 4 bytes, so the first keystream block,
///   AES-128(AEMK, RPI), XOR the metadata
public enum GAENCrypto {
    /// One ENIntervalNumber is ten minutes.
    public static let intervalSeconds = 600

    static let rpiPrefix: [UInt8] = Array("EN-RPI".utf8)

    /// The rolling proximity identifier key of a temporary exposure key (16 bytes).
    public static func rollingProximityIdentifierKey(_ tek: [UInt8]) -> [UInt8] {
        hkdf(tek, info: "EN-RPIK")
    }

    /// The associated encrypted metadata key of a temporary exposure key (16 bytes).
    public static func associatedEncryptedMetadataKey(_ tek: [UInt8]) -> [UInt8] {
        hkdf(tek, info: "EN-AEMK")
    }

    /// The 16-byte block that is encrypted into the identifier of `interval`.
    public static func paddedData(interval: UInt32) -> [UInt8] {
        var block: [UInt8] = Array("EN-RPI".utf8) + [UInt8](repeating: 0, count: 6)
        withUnsafeBytes(of: interval.littleEndian) { block.append(contentsOf: $0) }
        return block
    }

    /// RPIᵢ for one interval.
    public static func rollingProximityIdentifier(rpik: [UInt8], interval: UInt32) -> [UInt8] {
        var deriver = IdentifierDeriver(rpik: rpik)
        return deriver.identifier(interval: interval).bytes
    }

    /// Decrypts (or encrypts: CTR is its own inverse) 4 bytes of associated metadata heard with `rpi`.
    public static func associatedMetadata(aemk: [UInt8], rpi: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        precondition(aemk.count == 16 && rpi.count == 16 && bytes.count <= 16)
        var block = rpi
        AESBlock(key: aemk).encrypt(&block)
        return zip(bytes, block).map { $0 ^ $1 }
    }

    /// The transmit power (dBm, signed) in decrypted metadata: byte 0 is the version
    /// (0b01000000 for 1.0), byte 1 the power.
    public static func txPower(metadata: [UInt8]) -> Int? {
        guard metadata.count == 4 else { return nil }
        return Int(Int8(bitPattern: metadata[1]))
    }

    static func hkdf(_ tek: [UInt8], info: String) -> [UInt8] {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: tek), info: Data(info.utf8), outputByteCount: 16)
        return key.withUnsafeBytes { Array($0) }
    }
}

/// A 16-byte identifier held in two words: hashable without an allocation.
public struct RPI: Hashable, Sendable, Comparable {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        var h: UInt64 = 0
        var l: UInt64 = 0
        for (i, b) in bytes.enumerated() {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
        }
        high = h
        low = l
    }

    public var bytes: [UInt8] {
        (0..<16).map { i in i < 8 ? UInt8(truncatingIfNeeded: high >> (56 - 8 * i)) : UInt8(truncatingIfNeeded: low >> (120 - 8 * i)) }
    }

    public static func < (a: RPI, b: RPI) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

/// Derives the identifiers of one key, interval after interval, with the AES key schedule done once.
public struct IdentifierDeriver {
    private let aes: AESBlock
    private var block: [UInt8]

    public init(rpik: [UInt8]) {
        aes = AESBlock(key: rpik)
        block = GAENCrypto.paddedData(interval: 0)
    }

    public mutating func identifier(interval: UInt32) -> RPI {
        let aes = aes
        return block.withUnsafeMutableBufferPointer { buffer in
            // "EN-RPI" ‖ 6 zero bytes ‖ interval (LE), encrypted in place: no allocation per identifier.
            for (i, byte) in GAENCrypto.rpiPrefix.enumerated() { buffer[i] = byte }
            for i in 6..<12 { buffer[i] = 0 }
            buffer[12] = UInt8(truncatingIfNeeded: interval)
            buffer[13] = UInt8(truncatingIfNeeded: interval >> 8)
            buffer[14] = UInt8(truncatingIfNeeded: interval >> 16)
            buffer[15] = UInt8(truncatingIfNeeded: interval >> 24)
            aes.encrypt(buffer)
            var high: UInt64 = 0
            var low: UInt64 = 0
            for i in 0..<8 { high = high << 8 | UInt64(buffer[i]) }
            for i in 8..<16 { low = low << 8 | UInt64(buffer[i]) }
            return RPI(high: high, low: low)
        }
    }
}

/// AES-128 applied to single blocks (the "ECB" of the specification): BoringSSL's block function
/// (the one under swift-crypto's `AES.permute`, with the processor's AES instructions where it has
/// them), with the key schedule done once per key instead of once per block: deriving a day of a
/// country's identifiers is 5 million blocks. Tested against FIPS-197 and the GAEN vectors.
final class AESBlock {
    private var schedule = AES_KEY()

    init(key: [UInt8]) {
        precondition(key.count == 16)
        let rc = key.withUnsafeBufferPointer { CCryptoBoringSSL_AES_set_encrypt_key($0.baseAddress, 128, &schedule) }
        precondition(rc == 0)
    }

    func encrypt(_ block: inout [UInt8]) {
        precondition(block.count == 16)
        block.withUnsafeMutableBufferPointer { encrypt($0) }
    }

    func encrypt(_ block: UnsafeMutableBufferPointer<UInt8>) {
        CCryptoBoringSSL_AES_encrypt(block.baseAddress, block.baseAddress, &schedule)
    }
}
