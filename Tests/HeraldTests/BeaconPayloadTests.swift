import BLEHost
import Testing

@testable import Herald

@Suite struct BeaconPayloadTests {
    @Test func workedExampleFromHeraldCppSample() throws {
        let payload = BeaconPayload(country: 826, state: 4, code: 123123, name: "Erin's Stakehouse")
        let bytes = try payload.encoded()
        #expect(Hex.encode(bytes) == "303a030400f3e001001011" + Hex.encode(Array("Erin's Stakehouse".utf8)))
        #expect(bytes.count == 28)
        #expect(payload.encodedSize == 28)

        let decoded = try BeaconPayload(decoding: bytes)
        #expect(decoded == payload)
        #expect(decoded.name == "Erin's Stakehouse")
    }

    @Test func iosTestVectorIsLittleEndian() throws {
        let payload = BeaconPayload(country: 0xDDEE, state: 0x11FF, code: 0xAABB_CCDD)
        let bytes = try payload.encoded()
        #expect(bytes == [0x30, 0xEE, 0xDD, 0xFF, 0x11, 0xDD, 0xCC, 0xBB, 0xAA])
        let decoded = try BeaconPayload(decoding: bytes)
        #expect(decoded.country == 0xDDEE && decoded.state == 0x11FF && decoded.code == 0xAABB_CCDD)
        #expect(decoded.extendedData.isEmpty)
    }

    @Test func cppAdamsPizzaIs22Bytes() throws {
        #expect(try BeaconPayload(country: 826, state: 4, code: 12345, name: "Adams Pizza").encoded().count == 22)
    }

    @Test func specExampleSectionsAre71Bytes() throws {
        let url = "https://www.joesgourmetpizza.com"
        #expect(url.utf8.count == 32)
        let payload = BeaconPayload(country: 826, state: 4, code: 1, name: "Joe's Gourmet Pizza", location: "Window Seating", url: url)
        #expect(payload.extendedData.encodedSize == 71)
        let bytes = try payload.encoded()
        #expect(Array(bytes[9..<12]) == [0x10, 19, UInt8(ascii: "J")])
        let decoded = try BeaconPayload(decoding: bytes)
        #expect(decoded.extendedData.text(.location) == "Window Seating")
        #expect(decoded.extendedData.text(.url) == url)
        #expect(decoded.extendedData.section(.area) == nil)
        #expect(decoded.extendedData.sections.map(\.code) == [.premisesName, .location, .url])
    }

    @Test func textLengthsAreUTF8Bytes() throws {
        let payload = BeaconPayload(country: 250, state: 0, code: 7, name: "Café Zoë")
        let bytes = try payload.encoded()
        #expect(bytes[10] == 10)  // 8 characters, 10 bytes
        #expect(try BeaconPayload(decoding: bytes).name == "Café Zoë")
    }

    @Test func emptyTextsAreOmitted() throws {
        let payload = BeaconPayload(country: 1, state: 2, code: 3, name: "A", location: "", area: nil, url: "")
        #expect(try payload.encoded().count == 12)
    }

    @Test func payloadOver510BytesNamesTheLongestField() {
        let payload = BeaconPayload(
            country: 826, state: 4, code: 1, name: String(repeating: "n", count: 200), location: String(repeating: "l", count: 60),
            area: String(repeating: "a", count: 250))
        // 9 + 202 + 62 + 252 = 525
        #expect(throws: PayloadSizeError(field: "area", problem: .payloadTooLarge, size: 525, limit: 510)) {
            try payload.encoded()
        }
    }

    @Test func exactly510BytesIsAllowed() throws {
        let payload = BeaconPayload(
            country: 826, state: 4, code: 1, name: String(repeating: "n", count: 255), area: String(repeating: "a", count: 242))
        #expect(try payload.encoded().count == 510)
    }

    @Test func sectionOver255BytesNamesTheField() {
        let payload = BeaconPayload(country: 826, state: 4, code: 1, name: "x", url: "https://" + String(repeating: "u", count: 250))
        #expect(throws: PayloadSizeError(field: "url", problem: .sectionTooLong, size: 258, limit: 255)) {
            try payload.encoded()
        }
    }

    @Test func unknownSectionsSurviveARoundTrip() throws {
        let extended = ExtendedData(sections: [
            ExtendedDataSection(code: ExtendedDataCode(rawValue: 0x20), data: [0x01, 0x02, 0x03, 0x04]),
            ExtendedDataSection(code: .premisesName, text: "Pub"),
        ])
        let payload = BeaconPayload(country: 1, state: 2, code: 3, extendedData: extended)
        let decoded = try BeaconPayload(decoding: try payload.encoded())
        #expect(decoded == payload)
        #expect(decoded.name == "Pub")
        #expect(ExtendedDataCode(rawValue: 0x20).fieldName == "section 0x20")
    }

    @Test func truncatedHeaderIsATypedError() {
        let bytes: [UInt8] = [0x30, 0x3A, 0x03, 0x04, 0x00, 0xF3, 0xE0, 0x01]
        #expect(throws: DecodeError.self) { try BeaconPayload(decoding: bytes) }
        for n in 0..<9 {
            do {
                _ = try BeaconPayload(decoding: Array(bytes.prefix(n)))
                Issue.record("\(n) bytes decoded")
            } catch {
                #expect(error.kind == .truncated)
            }
        }
    }

    @Test func otherVersionsAreRejected() {
        do {
            _ = try BeaconPayload(decoding: [0x10, 0, 0, 0, 0, 0, 0, 0, 0])
            Issue.record("a simple payload decoded as a beacon")
        } catch {
            #expect(error.kind == .invalidValue)
            #expect(error.field == "beacon version")
        }
        #expect((try? BeaconPayload(decoding: [0x37, 1, 0, 2, 0, 3, 0, 0, 0]))?.version == 0x37)
    }
}

@Suite struct ExtendedDataParserTests {
    @Test func stopsWhenTwoOrFewerBytesRemain() {
        // A complete section, then code+length with no data: Herald drops the last two bytes.
        let data = ExtendedData(parsing: [0x10, 0x01, 0x41, 0x11, 0x05][...])
        #expect(data.sections == [ExtendedDataSection(code: .premisesName, data: [0x41])])
        #expect(ExtendedData(parsing: [0x10][...]).isEmpty)
        #expect(ExtendedData(parsing: [][...]).isEmpty)
    }

    @Test func clampsOverlongLengths() {
        let data = ExtendedData(parsing: [0x10, 0x09, 0x41, 0x42, 0x43][...])
        #expect(data.sections == [ExtendedDataSection(code: .premisesName, data: [0x41, 0x42, 0x43])])
    }

    @Test func zeroLengthSectionsAreKept() {
        let data = ExtendedData(parsing: [0x12, 0x00, 0x10, 0x01, 0x41][...])
        #expect(data.sections.map(\.code) == [.area, .premisesName])
        #expect(data.text(.area) == "")
        #expect(data.text(.premisesName) == "A")
    }

    @Test func parsesFromASliceWithOffsetIndices() {
        let bytes: [UInt8] = [0xEE, 0xEE, 0x13, 0x02, 0x68, 0x69]
        #expect(ExtendedData(parsing: bytes[2...]).text(.url) == "hi")
    }

    @Test func invalidUTF8DecodesWithReplacement() {
        #expect(ExtendedData(parsing: [0x10, 0x02, 0xFF, 0x41][...]).text(.premisesName) == "\u{FFFD}A")
    }
}
