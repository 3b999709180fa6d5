import Herald
import Sightings
import Testing

/// Placeholders are found by class (an identifier all one byte value), where each format keeps
/// its identifier; real identifiers and the header bytes around them are left alone.
@Suite struct PlaceholderIdentifierTests {
    /// Herald's simple payload: 0x10, country u16 LE, state u16 LE, contact identifier (16).
    static func simple(country: UInt16 = 826, state: UInt16 = 4, identifier: [UInt8]) -> [UInt8] {
        [0x10, UInt8(country & 0xFF), UInt8(country >> 8), UInt8(state & 0xFF), UInt8(state >> 8)] + identifier
    }

    @Test(arguments: [UInt8(0x00), 0xFF, 0x55])
    func aSimplePayloadWithAConstantContactIdentifierIsAPlaceholder(byte: UInt8) {
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .herald, payload: Self.simple(identifier: [UInt8](repeating: byte, count: 16))))
        // With an extension after it, and in any country: still the identifier that counts.
        let extended = Self.simple(country: 1, state: 0, identifier: [UInt8](repeating: byte, count: 16)) + [0x40, 0x01, 0x02]
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .herald, payload: extended))
    }

    @Test func aDerivedContactIdentifierIsNot() {
        // Herald's own vector: CI[0][0] for a secret key of 2048 zero bytes.
        let identifier: [UInt8] = [0xe2, 0xcf, 0xbe, 0xb3, 0x2d, 0xe9, 0x32, 0xc9, 0x17, 0x1c, 0x65, 0x8b, 0x5f, 0x57, 0xa3, 0x37]
        #expect(!PlaceholderIdentifier.isPlaceholder(kind: .herald, payload: Self.simple(identifier: identifier)))
        // One byte off the placeholder is an identity.
        var almost = [UInt8](repeating: 0, count: 16)
        almost[15] = 1
        #expect(!PlaceholderIdentifier.isPlaceholder(kind: .herald, payload: Self.simple(identifier: almost)))
    }

    @Test func gaenIdentifiersAllOneValueArePlaceholders() {
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .gaen, payload: [UInt8](repeating: 0, count: 16)))
        // The metadata after the identifier does not make it an identity.
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .gaen, payload: [UInt8](repeating: 0xFF, count: 16) + [1, 2, 3, 4]))
        #expect(!PlaceholderIdentifier.isPlaceholder(kind: .gaen, payload: (0..<16).map { UInt8($0) }))
    }

    @Test func testPayloadsAndOtherKinds() {
        // Herald's test payload: 0x00, 0x0000, an Int32 id, zero padding: id 0 names no one.
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .herald, payload: TestPayload.make(identifier: 0)))
        #expect(!PlaceholderIdentifier.isPlaceholder(kind: .herald, payload: TestPayload.make(identifier: 1000)))
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .opentrace, payload: [UInt8](repeating: 0, count: 32)))
        #expect(PlaceholderIdentifier.isPlaceholder(kind: .advert, payload: []))
        // Too short to tell: left alone.
        #expect(!PlaceholderIdentifier.isPlaceholder(kind: .advert, payload: [0, 0, 0]))
        #expect(!PlaceholderIdentifier.isPlaceholder(kind: .advert, payload: [0x12, 0x34, 0x56, 0x78]))
    }
}
