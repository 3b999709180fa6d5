import Testing
@testable import Exposure

/// The official test vectors of the Exposure Notification cryptography specification (v1.2, as
/// published with Google's reference implementation, TestVectors.java), written out as values.
struct GAENCryptoTests {
    static let tek = hex("75c734c6dd1a782de7a965da5eb93125")
    static let enin: UInt32 = 2_642_976  // 2020-04-02T00:00:00Z / 600
    static let rpik = hex("185ad91db69ec7dd048960f1f3ba6175")
    static let aemk = hex("d57c46af7a1d83965b9bed8bd152936a")
    static let metadata = hex("40080000")
    // (index, padded data, RPI, AEM)
    static let advertised: [(UInt32, String, String, String)] = [
        (0, "454e2d52504900000000000020542800", "8be6cd371c5c891604bfbe49df845096", "72033874"),
        (1, "454e2d52504900000000000021542800", "3c9a1de5dd6b02afa7fded7b570b3e56", "c29211b1"),
        (2, "454e2d52504900000000000022542800", "243ffe9a3b08bded3094bac8630bb8ad", "6adfad03"),
        (3, "454e2d52504900000000000023542800", "dfc3ed265e97d0eabb630e168b4214ed", "f1e2f80b"),
        (4, "454e2d52504900000000000024542800", "b3b85a69ebaec78db739852d1f34e0fa", "5668c474"),
        (143, "454e2d525049000000000000af542800", "f431b62ecf443102ce4ed0407de54bd4", "1215e57e"),
    ]

    @Test func keysFromTheTEK() {
        #expect(GAENCrypto.rollingProximityIdentifierKey(Self.tek) == Self.rpik)
        #expect(GAENCrypto.associatedEncryptedMetadataKey(Self.tek) == Self.aemk)
    }

    @Test func identifiersAndMetadata() {
        var deriver = IdentifierDeriver(rpik: Self.rpik)
        for (index, padded, rpi, aem) in Self.advertised {
            let interval = Self.enin + index
            #expect(GAENCrypto.paddedData(interval: interval) == hex(padded))
            #expect(GAENCrypto.rollingProximityIdentifier(rpik: Self.rpik, interval: interval) == hex(rpi))
            #expect(deriver.identifier(interval: interval) == RPI(hex(rpi)))
            #expect(GAENCrypto.associatedMetadata(aemk: Self.aemk, rpi: hex(rpi), Self.metadata) == hex(aem))
            // CTR is its own inverse: what a venue hears decrypts to the metadata.
            #expect(GAENCrypto.associatedMetadata(aemk: Self.aemk, rpi: hex(rpi), hex(aem)) == Self.metadata)
        }
        #expect(GAENCrypto.txPower(metadata: Self.metadata) == 8)
        #expect(GAENCrypto.txPower(metadata: [0x40, 0xF6, 0, 0]) == -10)
    }

    /// FIPS-197 appendix C.1 (AES-128): the block function itself.
    @Test func aesBlockFIPS197() {
        var block = hex("00112233445566778899aabbccddeeff")
        AESBlock(key: hex("000102030405060708090a0b0c0d0e0f")).encrypt(&block)
        #expect(block == hex("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    @Test func rpiWords() {
        let bytes = hex("8be6cd371c5c891604bfbe49df845096")
        #expect(RPI(bytes)?.bytes == bytes)
        #expect(RPI([1, 2, 3]) == nil)
    }
}

func hex(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    var chars = Array(text.utf8)[...]
    while chars.count >= 2 {
        out.append(UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16)!)
        chars = chars.dropFirst(2)
    }
    return out
}
