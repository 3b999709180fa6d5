import BLEHost
import BLETransport
import Testing

@testable import Simulation

/// The air as an HCITransport: virtual time moves only inside receive, by at most the timeout.
@Suite struct SimulatedTransportTests {
    static func transport(end: Double = 60) -> SimulatedTransport {
        let phone = AirTests.phone(0, .heraldAndroid, from: 0, to: 50)
        return SimulatedTransport(air: Air(truth: AirTests.truth([phone]), configuration: AirTests.noFailures), endTime: end)
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
