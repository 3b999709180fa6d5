import Testing
@testable import BLEHost

@Suite struct HostEngineTests {
    static func engine() throws -> HostEngine {
        HostEngine(configuration: HostConfiguration(database: try Fixture.database()))
    }

    static func sentOpcodes(_ actions: [HostAction]) -> [UInt16] {
        actions.compactMap { action in
            guard case .send(let packet) = action, packet.type == .command, packet.body.count >= 2 else { return nil }
            return UInt16(packet.body[0]) | UInt16(packet.body[1]) << 8
        }
    }

    @Test func startResetsTheControllerFirst() throws {
        var engine = try Self.engine()
        #expect(Self.sentOpcodes(engine.start(now: .now)) == [0x0C03])
    }

    /// Garbage from the controller is dropped and counted; nothing crashes, nothing is sent.
    @Test func malformedControllerInputIsCountedNotTrusted() throws {
        var engine = try Self.engine()
        _ = engine.start(now: .now)
        let garbage: [H4Packet] = [
            H4Packet(type: .event, body: []),
            H4Packet(type: .event, body: [0x0E]),
            H4Packet(type: .event, body: [0x0E, 0x05, 0x01, 0x03]),  // length says 5, 2 present
            H4Packet(type: .event, body: [0x3E, 0x02, 0x02, 0x05]),  // 5 reports, none present
            H4Packet(type: .event, body: [0x13, 0x01, 0x02]),  // 2 handles, no entries
            H4Packet(type: .event, body: [0x05, 0x01, 0x00]),  // Disconnection Complete cut short
        ]
        for packet in garbage { #expect(engine.receive(packet, now: .now).isEmpty) }
        #expect(engine.counters.malformedEvents == garbage.count)

        let unexpected: [H4Packet] = [
            H4Packet(type: .command, body: [0x03, 0x0C, 0x00]),
            H4Packet(type: .sco, body: [0x01, 0x00, 0x00]),
            H4Packet(type: .iso, body: [0x01, 0x00, 0x00, 0x00]),
        ]
        for packet in unexpected { #expect(engine.receive(packet, now: .now).isEmpty) }
        #expect(engine.counters.unexpectedPackets == 3)

        // ACL before the controller is initialised, and an unknown event: ignored.
        #expect(engine.receive(H4Packet(type: .acl, body: [0x01, 0x20, 0x01, 0x00, 0xFF]), now: .now).isEmpty)
        #expect(engine.receive(H4Packet(type: .event, body: [0xFE, 0x01, 0x00]), now: .now).isEmpty)
    }

    @Test func requestsFailWhenTheSessionEnds() throws {
        var engine = try Self.engine()
        _ = engine.start(now: .now)
        let info = HostRequestID(rawValue: 1)
        let gatt = HostRequestID(rawValue: 2)
        #expect(engine.perform(.controllerInfo, id: info, now: .now).isEmpty)  // waits for init
        let noLink = engine.perform(.gatt(.read(3), link: 7), id: gatt, now: .now)
        guard case .reply(gatt, .failure(.noSuchLink(7)))? = noLink.first else {
            Issue.record("expected noSuchLink, got \(noLink)")
            return
        }
        let stopped = engine.stop(reason: "transport closed", now: .now)
        let replies = stopped.compactMap { if case .reply(let id, .failure(let e)) = $0 { (id, e) } else { nil } }
        #expect(replies.map(\.0) == [info])
        #expect(replies.map(\.1) == [.sessionEnded("transport closed")])
    }
}
