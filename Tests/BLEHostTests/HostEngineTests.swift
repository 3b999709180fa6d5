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

/// Switching the configured advertising and scanning off and on (opening hours).
@Suite struct HostEngineRadioSwitchTests {
    /// Runs the engine's actions against the fake controller until it sends nothing more;
    /// returns the radio states it reported.
    static func drain(_ engine: inout HostEngine, _ controller: inout FakeController, _ initial: [HostAction]) -> [RadioState] {
        var pending = initial
        var radio: [RadioState] = []
        while !pending.isEmpty {
            let action = pending.removeFirst()
            switch action {
            case .send(let packet) where packet.type == .command:
                for event in controller.receive([0x01] + packet.body) {
                    pending += engine.receive(H4Packet(type: .event, body: event), now: .now)
                }
            case .emit(.radio(let state)):
                radio.append(state)
            default:
                break
            }
        }
        return radio
    }

    @Test func advertisingAndScanningStopAndResumeAndStayOffAcrossRestarts() throws {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        let configuration = HostConfiguration(
            database: try Fixture.database(), advertising: AdvertisingConfiguration(data: try builder.build()),
            scanning: LESetScanParameters())
        var engine = HostEngine(configuration: configuration)
        var controller = FakeController()
        let on = RadioState(advertising: true, scanning: true), off = RadioState(advertising: false, scanning: false)

        #expect(Self.drain(&engine, &controller, engine.start(now: .now)).last == on)
        #expect(controller.advertising && controller.scanning)

        let id = HostRequestID(rawValue: 1)
        let switchedOff = engine.perform(.setRadio(advertising: false, scanning: false), id: id, now: .now)
        #expect(switchedOff.contains { if case .reply(id, .success(.done)) = $0 { true } else { false } })
        #expect(Self.drain(&engine, &controller, switchedOff).last == off)
        #expect(!controller.advertising && !controller.scanning)

        // A controller restart keeps them off.
        _ = Self.drain(&engine, &controller, engine.stop(reason: "reset", now: .now))
        controller.received = []
        _ = Self.drain(&engine, &controller, engine.start(now: .now))
        #expect(!controller.advertising && !controller.scanning)
        #expect(!controller.received.contains { $0.opcode == .leSetAdvertisingEnable && $0.parameters == [1] })

        #expect(Self.drain(&engine, &controller, engine.perform(.setRadio(advertising: true, scanning: true), id: id, now: .now)).last == on)
        #expect(controller.advertising && controller.scanning)
    }

    @Test func aHostConfiguredSwitchedOffNeverEnablesTheRadio() throws {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        var engine = HostEngine(configuration: HostConfiguration(
            database: try Fixture.database(), advertising: AdvertisingConfiguration(data: try builder.build()),
            scanning: LESetScanParameters(), switchedOn: RadioState(advertising: false, scanning: false)))
        var controller = FakeController()
        _ = Self.drain(&engine, &controller, engine.start(now: .now))
        #expect(!controller.received.contains { ($0.opcode == .leSetAdvertisingEnable || $0.opcode == .leSetScanEnable) && $0.parameters.first == 1 })
        #expect(controller.received.contains { $0.opcode == .leReadBufferSize })  // initialised all the same
    }
}
