import BLEHost
import Testing

@testable import Herald

@Suite struct PayloadFormatTests {
    @Test(arguments: [
        (UInt8(0x00), PayloadFormat.customRouting), (0x07, .customRouting), (0x08, .customCountryState), (0x0F, .customCountryState),
        (0x10, .simple), (0x17, .simple), (0x18, .reserved), (0x20, .secured), (0x27, .secured), (0x30, .venueBeacon),
        (0x37, .venueBeacon), (0x38, .reserved), (0x80, .gaen), (0x88, .robert), (0x90, .openTrace), (0x98, .dp3t),
        (0xA0, .pact), (0xA7, .pact), (0xA8, .reserved), (0xFF, .reserved),
    ])
    func classifiesByFirstByte(first: UInt8, format: PayloadFormat) {
        #expect(PayloadFormat(classifying: [first, 1, 2]) == format)
    }

    @Test func emptyPayloadIsReserved() {
        #expect(PayloadFormat(classifying: [UInt8]()) == .reserved)
    }

    @Test func shortNameIsBase64OfBytesFromThreeCutToSixCharacters() throws {
        let beacon = try BeaconPayload(country: 826, state: 4, code: 123123, name: "Erin's Stakehouse").encoded()
        #expect(heraldShortName(beacon) == "BADz4A")
        #expect(heraldShortName(TestPayload.make(identifier: 1)) == "AQAAAA")
    }

    @Test func shortNameOfShortPayloads() {
        #expect(heraldShortName([UInt8]()) == "")
        #expect(heraldShortName([0x01, 0x02]) == "AQI=")
        #expect(heraldShortName([0, 0, 0, 0x07]) == "Bw==")
        #expect(SensorPayload(kind: .herald, bytes: [0x01, 0x02]).description == "herald:AQI=")
    }
}

@Suite struct TestPayloadTests {
    @Test func layout() {
        let payload = TestPayload.make(identifier: 0x0A0B_0C0D)
        #expect(payload.count == 129)
        #expect(Array(payload.prefix(7)) == [0x00, 0x00, 0x00, 0x0D, 0x0C, 0x0B, 0x0A])
        #expect(payload.dropFirst(7).allSatisfy { $0 == 0 })
        #expect(PayloadFormat(classifying: payload) == .customRouting)
    }

    @Test func identifierRoundTrips() {
        for id: Int32 in [0, 1, -1, .max, .min, 123_456] {
            #expect(TestPayload.identifier(of: TestPayload.make(identifier: id)) == id)
        }
    }

    @Test func otherPayloadsHaveNoIdentifier() {
        var payload = TestPayload.make(identifier: 5)
        #expect(TestPayload.identifier(of: payload.dropLast()) == nil)
        payload[1] = 1
        #expect(TestPayload.identifier(of: payload) == nil)
        // Works on a slice whose indices do not start at zero.
        let framed = [0xEE] + TestPayload.make(identifier: 9)
        #expect(TestPayload.identifier(of: framed[1...]) == 9)
    }
}

@Suite struct PseudoDeviceAddressTests {
    @Test func keepsBits16To63OfTheInt64LittleEndian() {
        let address = PseudoDeviceAddress(int64: 0x0102_0304_0506_0708)
        #expect(address.bytes == [0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        #expect(address.int64Value == 0x0102_0304_0506_0000)
        #expect(address.description == "060504030201")
    }

    @Test func negativeValues() {
        let address = PseudoDeviceAddress(int64: -2)
        #expect(address.bytes == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(address.int64Value == -65536)
    }

    @Test func decodesSixBytes() throws {
        let address = try PseudoDeviceAddress(bytes: [0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        #expect(address == PseudoDeviceAddress(int64: 0x0102_0304_0506_0708))
        #expect(throws: DecodeError.self) { try PseudoDeviceAddress(bytes: [1, 2, 3, 4, 5]) }
        #expect(throws: DecodeError.self) { try PseudoDeviceAddress(bytes: [1, 2, 3, 4, 5, 6, 7]) }
    }

    @Test func fromManufacturerData() {
        let advertised: [UInt8] = [0xAA, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x99]
        let expected = PseudoDeviceAddress(int64: 0x0102_0304_0506_0708)
        #expect(PseudoDeviceAddress(companyID: 0x05F1, data: advertised[1..<7]) == expected)
        #expect(PseudoDeviceAddress(companyID: 0xFFFA, data: advertised[1...]) == expected)  // longer: first six
        #expect(PseudoDeviceAddress(companyID: 0x004C, data: advertised[1..<7]) == nil)
        #expect(PseudoDeviceAddress(companyID: 0x05F1, data: advertised[1..<6]) == nil)
    }
}

@Suite struct GAENAdvertTests {
    // RPI[0] and AEM[0] of the Exposure Notification test vectors (appliance.md §5).
    static let rpi = Hex.decode("8be6cd371c5c891604bfbe49df845096")!
    static let aem = Hex.decode("72033874")!

    @Test func splitsRPIAndMetadata() throws {
        let advert = try GAENAdvert(serviceData: (Self.rpi + Self.aem)[...])
        #expect(advert.rpi == Self.rpi)
        #expect(advert.aem == Self.aem)
        #expect(advert.serviceData == Self.rpi + Self.aem)
        #expect(try GAENAdvert(rpi: Self.rpi, metadata: Self.aem) == advert)
    }

    @Test func wrongLengthsAreTypedErrors() {
        #expect(throws: DecodeError.self) { try GAENAdvert(serviceData: Self.rpi[...]) }
        #expect(throws: DecodeError.self) { try GAENAdvert(serviceData: (Self.rpi + Self.aem + [0])[...]) }
    }
}
