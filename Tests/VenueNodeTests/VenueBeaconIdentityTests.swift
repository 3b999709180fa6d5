import Synchronization
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
        var link = MemoryLink(database: database, validate: SignalWriteGate().validate)
        #expect(link.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.service)) == .success(.value(identity.payload)))
        #expect(link.clientRequests(.readBlobRequest) == 1)

        // The largest venue payload (510 bytes) reads back whole.
        let big = BeaconPayload(
            country: 1, state: 1, code: 1, name: String(repeating: "n", count: 255), location: String(repeating: "l", count: 242))
        let bigIdentity = try VenueBeaconIdentity(beacon: big, legacyService: false)
        #expect(bigIdentity.payload.count == 510)
        var bigLink = MemoryLink(database: try bigIdentity.database(), validate: SignalWriteGate().validate)
        #expect(bigLink.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.service)) == .success(.value(bigIdentity.payload)))
    }

    @Test func legacyServiceIsServedToo() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: true)
        var link = MemoryLink(database: try identity.database(), validate: SignalWriteGate().validate)
        #expect(link.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.legacyService)) == .success(.value(identity.payload)))
    }

    @Test func malformedSignalWritesGetInvalidAttributeValueLength() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: false)
        let gate = SignalWriteGate()
        var link = MemoryLink(database: try identity.database(), validate: gate.validate)
        let signal = HeraldUUIDs.androidSignalCharacteristic
        let service = HeraldUUIDs.service
        func write(_ value: [UInt8]) -> Result<GATTClientResult, GATTClientError>? {
            link.run(.writeCharacteristic(signal, inService: service, value: value))
        }
        let valueHandle = try #require(link.database.characteristic(service: service, uuid: signal)).valueHandle

        // Good writes: RSSI, payload, wake (empty), an unknown action.
        #expect(write([0x02, 0xC4, 0xFF]) == .success(.written))
        #expect(write([0x01, 3, 0, 0xAA, 0xBB, 0xCC]) == .success(.written))
        #expect(write([]) == .success(.written))
        #expect(write([0x7F, 1, 2]) == .success(.written))
        #expect(gate.rejected == 0)

        // Too short, length mismatch (both ways), oversized RSSI: 0x0D with the value handle.
        let invalid = GATTClientError.att(.invalidAttributeValueLength, request: .writeRequest, handle: valueHandle)
        #expect(write([0x02, 0xC4]) == .failure(invalid))
        #expect(write([0x01, 5, 0, 0xAA]) == .failure(invalid))
        #expect(write([0x01, 1, 0, 0xAA, 0xBB]) == .failure(invalid))
        #expect(write([0x02, 0xC4, 0xFF, 0x00]) == .failure(invalid))
        #expect(write([0x03, 0xC4]) == .failure(invalid))
        #expect(gate.rejected == 5)
        // The server goes on answering: the payload still reads.
        #expect(link.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: service)) == .success(.value(identity.payload)))
        // Only accepted writes reached the application.
        #expect(link.serverWrites.map(\.value) == [[0x02, 0xC4, 0xFF], [0x01, 3, 0, 0xAA, 0xBB, 0xCC], [], [0x7F, 1, 2]])
        // The payload characteristic is not writable.
        #expect(link.run(.writeCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: service, value: [1]))
            .map { if case .failure(.att(.writeNotPermitted, _, _)) = $0 { true } else { false } } == true)
    }

    /// Per-link rate limit: a burst, then the rate; a flooding link is refused with 0x11 and
    /// counted, another link is not affected, and a well-formed write is never counted malformed.
    @Test func signalWritesBeyondTheRateLimitAreRefusedPerLink() throws {
        let identity = try VenueBeaconIdentity(beacon: Self.erins, legacyService: false)
        let database = try identity.database()
        let signal = try #require(database.characteristic(service: HeraldUUIDs.service, uuid: HeraldUUIDs.androidSignalCharacteristic))
        let clock = Mutex(ContinuousClock.now)
        let gate = SignalWriteGate(rateLimit: .init(perSecond: 2, burst: 3)) { clock.withLock { $0 } }
        func write(_ link: UInt16, _ value: [UInt8] = [0x02, 0xC4, 0xFF]) -> ATTErrorCode? {
            gate.validate(GATTWrite(link: link, characteristic: signal, value: value, withResponse: true))
        }
        #expect((0..<3).map { _ in write(1) } == [nil, nil, nil])
        #expect(write(1) == .insufficientResources)
        #expect(write(2) == nil)  // another link has its own bucket
        clock.withLock { $0 += .milliseconds(500) }  // one token back
        #expect(write(1) == nil)
        #expect(write(1) == .insufficientResources)
        #expect(write(1, [0x02]) == SignalWriteError.attError)  // malformed first, whatever the rate
        clock.withLock { $0 += .seconds(60) }
        #expect((0..<4).map { _ in write(1) } == [nil, nil, nil, .insufficientResources])
        #expect(gate.rateLimited == 3 && gate.rejected == 1)
        // The node's limit: 8 at once, then 4 a second.
        #expect(SignalWriteGate.RateLimit.node == .init(perSecond: 4, burst: 8))
    }
}

/// A GATT client and our server connected in memory: every PDU one side sends reaches the other.
struct MemoryLink {
    var client = GATTConnection(link: 1)
    var server = GATTConnection(link: 2)
    var database: GATTDatabase
    let validate: GATTWriteValidator
    let now = ContinuousClock.now
    var serverWrites: [GATTWrite] = []
    private var clientPDUs: [[UInt8]] = []

    init(database: GATTDatabase, validate: @escaping GATTWriteValidator) {
        self.database = database
        self.validate = validate
    }

    mutating func run(_ procedure: GATTClientProcedure) -> Result<GATTClientResult, GATTClientError>? {
        var (id, actions) = client.start(procedure, now: now)
        var result: Result<GATTClientResult, GATTClientError>?
        while !actions.isEmpty {
            var toClient: [[UInt8]] = []
            for action in actions {
                switch action {
                case .send(let pdu):
                    clientPDUs.append(pdu)
                    for reply in server.receive(pdu[...], database: database, now: now, validateWrite: validate) {
                        switch reply {
                        case .send(let back): toClient.append(back)
                        case .write(let write): serverWrites.append(write)
                        default: break
                        }
                    }
                case .procedureFinished(id, let finished):
                    result = finished
                default:
                    break
                }
            }
            actions = toClient.flatMap { client.receive($0[...], database: database, now: now) }
        }
        return result
    }

    func clientRequests(_ opcode: ATTOpcode) -> Int { clientPDUs.filter { $0.first == opcode.rawValue }.count }
}
