import BLEHost
import Herald
import Testing
@testable import VenueNode

@Suite struct VenueBeaconIdentityTests {
    static let erins = BeaconPayload(country: 826, state: 4, code: 123123, name: "Erin's Stakehouse")

    @Test func advertCarriesFlagsAndTheHeraldServiceItself() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: false)
        #expect(try identity.advertisingData().bytes == [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC])
        let legacy = try VenueBeaconIdentity(beacon: Self.erins, legacyService: true)
        let bytes = try legacy.advertisingData().bytes
        #expect(bytes.count == 25)
        #expect(Array(bytes.prefix(9)) == [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC, 0x11, 0x07])
        let data = AdvertisingData(bytes)
        #expect(Array(data.serviceUUIDs) == [HeraldUUIDs.service, HeraldUUIDs.legacyService])
        // Herald's own classifier (what a phone's receiver does) sees a Herald device.
        let classifier = try AdvertClassifier()
        #expect(classifier.classify(try identity.advertisingData().bytes) == .herald(pseudoAddress: nil, apple: false))
        #expect(classifier.classify(bytes) == .herald(pseudoAddress: nil, apple: false))
    }

    @Test func scanResponseNamesTheVenueAndShortensLongNames() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: false)
        #expect(try identity.scanResponse().bytes == [18, 0x09] + Array("Erin's Stakehouse".utf8))

        let long = "The Very Long Name Of A Riverside Public House"
        let shortened = try VenueBeaconIdentity(beacon: BeaconPayload(country: 1, state: 2, code: 3, name: long), legacyService: false)
        let response = try shortened.scanResponse().bytes
        #expect(response.count == 31)
        #expect(response[1] == 0x08)  // shortened local name
        #expect(String(decoding: response[2...], as: UTF8.self) == String(long.prefix(29)))

        // Cut at a character boundary: 15 two-byte characters do not fit in 29 bytes; 14 do.
        let accents = String(repeating: "é", count: 15)
        let cut = try VenueBeaconIdentity(beacon: BeaconPayload(country: 1, state: 2, code: 3, name: accents), legacyService: false)
        let cutBytes = try cut.scanResponse().bytes
        #expect(cutBytes.count == 30)
        #expect(String(decoding: cutBytes[2...], as: UTF8.self) == String(repeating: "é", count: 14))
        #expect(VenueBeaconIdentity.fit("abc", bytes: 29) == ("abc", true))
    }

    @Test func oversizedPayloadIsRefusedNamingTheField() {
        let beacon = BeaconPayload(
            country: 1, state: 1, code: 1, name: String(repeating: "n", count: 250), location: String(repeating: "l", count: 250))
        #expect(throws: PayloadSizeError.self) { try VenueBeaconIdentity(beacon: beacon, legacyService: false) }
    }

    @Test func gattServesTheWorkedExamplePayloadWithLongReads() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: false)
        #expect(Hex.encode(identity.payload) == "303a030400f3e001001011" + Hex.encode(Array("Erin's Stakehouse".utf8)))
        #expect(identity.payload.count == 28)
        let database = try identity.database()
        let payload = try #require(database.characteristic(service: HeraldUUIDs.service, uuid: HeraldUUIDs.payloadCharacteristic))
        #expect(payload.properties == .read)
        let signal = try #require(database.characteristic(service: HeraldUUIDs.service, uuid: HeraldUUIDs.androidSignalCharacteristic))
        #expect(signal.properties == [.write, .writeWithoutResponse])
        #expect(signal.clientConfigurationHandle == nil)
        #expect(database.characteristic(service: HeraldUUIDs.legacyService, uuid: HeraldUUIDs.payloadCharacteristic) == nil)
        #expect(database.characteristic(service: GATTUUID.genericAccessService, uuid: GATTUUID.deviceName).flatMap {
            database.attribute($0.valueHandle)?.value
        } == Array("Erin's Stakehouse".utf8))

        // A client at the default MTU (23) needs Read Blob for 28 bytes.
        var link = MemoryLink(database: database, validate: { SignalWriteGate().validate(&$0, now: .now) })
        #expect(link.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.service)) == .success(.value(identity.payload)))
        #expect(link.clientRequests(.readBlobRequest) == 1)

        // The largest venue payload (510 bytes) reads back whole.
        let big = BeaconPayload(
            country: 1, state: 1, code: 1, name: String(repeating: "n", count: 255), location: String(repeating: "l", count: 242))
        let bigIdentity = try VenueBeaconIdentity(beacon: big, legacyService: false)
        #expect(bigIdentity.payload.count == 510)
        var bigLink = MemoryLink(database: try bigIdentity.database(), validate: { SignalWriteGate().validate(&$0, now: .now) })
        #expect(bigLink.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.service)) == .success(.value(bigIdentity.payload)))
    }

    @Test func legacyServiceIsServedToo() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: true)
        var link = MemoryLink(database: try identity.database(), validate: { SignalWriteGate().validate(&$0, now: .now) })
        #expect(link.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.legacyService)) == .success(.value(identity.payload)))
    }
}
