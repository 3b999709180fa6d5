import BLEHost
import Herald
import Testing

@testable import VenueNode

/// ``SignalWriteGate``: malformed signal writes refused with 0x0D, floods with 0x11, per link.
@Suite struct SignalWriteGateTests {
    @Test func malformedSignalWritesGetInvalidAttributeValueLength() throws {
        let identity = try VenueBeaconIdentity(beacon: VenueBeaconIdentityTests.erins, legacyService: false)
        let gate = SignalWriteGate()
        var link = MemoryLink(database: try identity.database(), validate: { gate.validate(&$0, now: .now) })
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
        #expect(link.refusedWrites.isEmpty)

        // Too short, length mismatch (both ways), oversized RSSI: 0x0D with the value handle.
        let invalid = GATTClientError.att(.invalidAttributeValueLength, request: .writeRequest, handle: valueHandle)
        #expect(write([0x02, 0xC4]) == .failure(invalid))
        #expect(write([0x01, 5, 0, 0xAA]) == .failure(invalid))
        #expect(write([0x01, 1, 0, 0xAA, 0xBB]) == .failure(invalid))
        #expect(write([0x02, 0xC4, 0xFF, 0x00]) == .failure(invalid))
        #expect(write([0x03, 0xC4]) == .failure(invalid))
        // The server reports each refusal to the application (the node counts them), with 0x0D.
        #expect(link.refusedWrites.map(\.write.value) == [[0x02, 0xC4], [0x01, 5, 0, 0xAA], [0x01, 1, 0, 0xAA, 0xBB], [0x02, 0xC4, 0xFF, 0x00], [0x03, 0xC4]])
        #expect(link.refusedWrites.allSatisfy { $0.error == .invalidAttributeValueLength })
        // The server goes on answering: the payload still reads.
        #expect(link.run(.readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: service)) == .success(.value(identity.payload)))
        // Only accepted writes reached the application.
        #expect(link.serverWrites.map(\.value) == [[0x02, 0xC4, 0xFF], [0x01, 3, 0, 0xAA, 0xBB, 0xCC], [], [0x7F, 1, 2]])
        // The payload characteristic is not writable; the database's refusal is the peer's business alone.
        #expect(link.run(.writeCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: service, value: [1]))
            .map { if case .failure(.att(.writeNotPermitted, _, _)) = $0 { true } else { false } } == true)
        #expect(link.refusedWrites.count == 5)
    }

    /// Per-link rate limit: a burst, then the rate; a flooding link is refused with 0x11, another
    /// link is not affected, and a malformed write is refused as malformed whatever the rate.
    @Test func signalWritesBeyondTheRateLimitAreRefusedPerLink() throws {
        let identity = try VenueBeaconIdentity(beacon: VenueBeaconIdentityTests.erins, legacyService: false)
        let database = try identity.database()
        let signal = try #require(database.characteristic(service: HeraldUUIDs.service, uuid: HeraldUUIDs.androidSignalCharacteristic))
        var clock = ContinuousClock.now
        let gate = SignalWriteGate(rateLimit: .init(perSecond: 2, burst: 3))
        func write(_ link: UInt16, _ value: [UInt8] = [0x02, 0xC4, 0xFF]) -> ATTErrorCode? {
            var write = GATTWrite(link: link, characteristic: signal, value: value, withResponse: true)
            return gate.validate(&write, now: clock)
        }
        #expect((0..<3).map { _ in write(1) } == [nil, nil, nil])
        #expect(write(1) == .insufficientResources)
        #expect(write(2) == nil)  // another link has its own bucket
        clock += .milliseconds(500)  // one token back
        #expect(write(1) == nil)
        #expect(write(1) == .insufficientResources)
        #expect(write(1, [0x02]) == SignalWriteError.attError)  // malformed first, whatever the rate
        clock += .seconds(60)
        #expect((0..<4).map { _ in write(1) } == [nil, nil, nil, .insufficientResources])
        // The node's limit: 8 at once, then 4 a second.
        #expect(SignalWriteGate.RateLimit.node == .init(perSecond: 4, burst: 8))
    }
}
