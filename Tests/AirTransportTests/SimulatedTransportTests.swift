import AirTransport
import BLEHost
import BLETransport
import Herald
import Simulation
import Testing

/// The air as an HCITransport: virtual time moves only inside receive, by at most the timeout.
@Suite struct SimulatedTransportTests {
    /// One Herald Android phone 3 m away from 0 to 50 s (as `SimulationTests`' `AirTests.phone`).
    static func transport(end: Double = 60) -> SimulatedTransport {
        let phone = SimulatedDevice(
            id: 0, kind: .heraldAndroid, owner: 0, payload: TestPayload.make(identifier: 500),
            advert: .heraldAndroid(PseudoDeviceAddress(rawValue: 0x1234_5678_9A00)), advertInterval: 0.25, signalWriteInterval: nil,
            rotation: AddressRotation(period: 900, phase: 0, seed: 40), measuredPower: -60,
            presence: [PresenceSegment(start: 0, end: 50, path: .fixed(3))], seed: 90)
        let truth = GroundTruth(configuration: VenueConfiguration(visitors: 1, seed: 77, walkPasts: 0), people: [], devices: [phone])
        let noFailures = AirConfiguration(
            radio: RadioModel(advertLoss: 0.1), connectionFailure: 0, phonesReadVenue: false, parameterRequestChance: 0)
        return SimulatedTransport(air: Air(truth: truth, configuration: noFailures), endTime: end)
    }

    @Test func commandsAreAnsweredWithoutTimePassing() throws {
        let t = Self.transport()
        try t.send(H4Packet(type: .command, body: Array(Reset().packet.dropFirst())))
        let packets = try t.receive(timeout: .seconds(5))
        #expect(packets.count == 1)
        guard case .commandComplete(let c) = try HCIEvent(decoding: packets[0].body[...]) else {
            Issue.record("not Command Complete")
            return
        }
        #expect(c.opcode == .reset)
        #expect(t.now == 0)
    }

    @Test func receiveAdvancesVirtualTimeByTheTimeoutWhenNothingComes() throws {
        let t = Self.transport()
        // Not scanning: nothing for the host.
        #expect(try t.receive(timeout: .milliseconds(1500)).isEmpty)
        #expect(t.now == 1.5)
        #expect(try t.receive(timeout: .seconds(2)).isEmpty)
        #expect(t.now == 3.5)
        #expect(t.instant == t.inspect { $0.instant(3.5) })
    }

    @Test func receiveStopsAtTheFirstPacketForTheHost() throws {
        let t = Self.transport()
        for command in [SetEventMask().packet, LESetEventMask().packet, LESetScanEnable(true).packet] {
            try t.send(H4Packet(type: .command, body: Array(command.dropFirst())))
        }
        #expect(try t.receive(timeout: nil).count == 3)
        let reports = try t.receive(timeout: .seconds(30))
        #expect(!reports.isEmpty)
        // The first advert arrives within the phone's first interval (plus the batch window).
        #expect(t.now > 0 && t.now < 0.3)
    }

    @Test func theEndOfTheRunStopsTime() throws {
        let t = Self.transport(end: 10)
        #expect(try t.receive(timeout: .seconds(60)).isEmpty)
        #expect(t.now == 10 && t.isFinished)
        #expect(try t.receive(timeout: .milliseconds(1)).isEmpty)
        #expect(t.now == 10)
    }

    @Test func wakeUpReturnsAtOnceAndCloseEndsTheTransport() throws {
        let t = Self.transport()
        t.wakeUp()
        #expect(try t.receive(timeout: .seconds(30)).isEmpty)
        #expect(t.now == 0)
        t.close()
        #expect(throws: HCITransportError.closed) { try t.receive(timeout: .seconds(1)) }
        #expect(throws: HCITransportError.closed) { try t.send(H4Packet(type: .command, body: [0x03, 0x0C, 0x00])) }
    }
}
