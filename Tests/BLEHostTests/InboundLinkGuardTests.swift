import Testing
@testable import BLEHost

/// Issue 15, item 4: a phone's link (we are peripheral) with nothing useful on it is dropped
/// after the idle limit, and its address does not get back in at once.
@Suite struct InboundLinkGuardTests {
    static let t0 = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }
    static let phone = BluetoothAddress(rawValue: 0xC000_0000_0001)
    static let other = BluetoothAddress(rawValue: 0xC000_0000_0002)

    @Test func anIdleLinkIsDroppedAndItsAddressBackedOffDoubling() {
        var guardian = InboundLinkGuard(configuration: .init(idleTimeout: .seconds(5), backoff: .seconds(30), maximumBackoff: .seconds(100)))
        #expect(guardian.admits(Self.phone, now: Self.at(0)))
        guardian.opened(1, address: Self.phone, now: Self.at(0))
        guardian.opened(2, address: Self.other, now: Self.at(0))
        #expect(guardian.nextDeadline == Self.at(5))
        guardian.useful(2, now: Self.at(4))
        #expect(guardian.tick(now: Self.at(4.9)) == [])
        #expect(guardian.tick(now: Self.at(5)) == [1])  // the phone that did nothing
        #expect(guardian.nextDeadline == Self.at(9))
        guardian.closed(2)  // closed links are forgotten
        // Backed off 30 s, then 60 s, capped at 100 s.
        #expect(!guardian.admits(Self.phone, now: Self.at(34.9)))
        #expect(guardian.admits(Self.phone, now: Self.at(35)))
        guardian.opened(3, address: Self.phone, now: Self.at(35))
        #expect(guardian.tick(now: Self.at(40)) == [3])
        #expect(!guardian.admits(Self.phone, now: Self.at(99.9)))
        #expect(guardian.admits(Self.phone, now: Self.at(100)))
        guardian.opened(4, address: Self.phone, now: Self.at(100))
        #expect(guardian.tick(now: Self.at(105)) == [4])
        #expect(!guardian.admits(Self.phone, now: Self.at(204.9)))
        #expect(guardian.admits(Self.phone, now: Self.at(205)))
        #expect(guardian.counters == .init(idleDrops: 3, refusals: 0))  // the engine counts refusals
        #expect(guardian.nextDeadline == nil)
    }

    @Test func aDropLongAfterTheLastBackoffStartsFromTheFirstStep() {
        var guardian = InboundLinkGuard(configuration: .init(idleTimeout: .seconds(5), backoff: .seconds(30), maximumBackoff: .seconds(100)))
        guardian.opened(1, address: Self.phone, now: Self.at(0))
        _ = guardian.tick(now: Self.at(5))  // refused until 35
        guardian.opened(2, address: Self.phone, now: Self.at(500))  // long after 35 + 100
        _ = guardian.tick(now: Self.at(505))
        #expect(!guardian.admits(Self.phone, now: Self.at(534)))
        #expect(guardian.admits(Self.phone, now: Self.at(535)))
    }

    @Test func withoutAnIdleLimitNothingIsWatched() {
        var guardian = InboundLinkGuard(configuration: .init())
        guardian.opened(1, address: Self.phone, now: Self.at(0))
        #expect(guardian.nextDeadline == nil)
        #expect(guardian.tick(now: Self.at(3600)) == [])
    }

    @Test func rememberedAddressesAreBounded() {
        var guardian = InboundLinkGuard(configuration: .init(idleTimeout: .seconds(1), rememberedAddresses: 4))
        for n in 0..<10 {
            let handle = UInt16(n)
            guardian.opened(handle, address: BluetoothAddress(rawValue: 0xC000_0000_1000 + UInt64(n)), now: Self.at(Double(n)))
            #expect(guardian.tick(now: Self.at(Double(n) + 1)) == [handle])
        }
        // The six whose backoff ends first were forgotten, the last four are still refused.
        let refused = (0..<10).filter { !guardian.admits(BluetoothAddress(rawValue: 0xC000_0000_1000 + UInt64($0)), now: Self.at(12)) }
        #expect(refused == [6, 7, 8, 9])
    }
}

/// The guard inside the host engine, against the scripted controller: a phone's link idle too
/// long is disconnected, its address is then refused with 0x14 and never reported connected, and
/// a phone that writes its signal characteristic keeps its link.
@Suite struct HostEngineIdleLinkTests {
    static let t0 = ContinuousClock.now
    static func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }
    static let idler = BluetoothAddress(rawValue: 0xC000_0000_00A1)
    static let writer = BluetoothAddress(rawValue: 0xC000_0000_00A2)

    struct Rig {
        var engine: HostEngine
        var controller = FakeController()
        var emitted: [HostEvent] = []

        init(maximumConnections: Int = 4) throws {
            engine = HostEngine(configuration: HostConfiguration(
                database: try Fixture.database(), linkManager: .init(maximumConnections: maximumConnections), requestTimeout: .seconds(10),
                inboundLinks: .init(idleTimeout: .seconds(5), backoff: .seconds(30))))
            run(engine.start(now: HostEngineIdleLinkTests.at(0)), now: HostEngineIdleLinkTests.at(0))
        }

        /// Carries out the engine's actions against the controller until nothing moves.
        mutating func run(_ initial: [HostAction], now: ContinuousClock.Instant) {
            var pending = initial
            while !pending.isEmpty {
                switch pending.removeFirst() {
                case .send(let packet) where packet.type == .command:
                    for event in controller.receive([0x01] + packet.body) {
                        pending += engine.receive(H4Packet(type: .event, body: event), now: now)
                    }
                case .emit(let event):
                    emitted.append(event)
                default:
                    break
                }
            }
        }

        mutating func event(_ body: [UInt8], now: ContinuousClock.Instant) { run(engine.receive(H4Packet(type: .event, body: body), now: now), now: now) }

        mutating func connects(_ address: BluetoothAddress, handle: UInt16, now: ContinuousClock.Instant) {
            event(FakeController.connectionComplete(handle: handle, role: .peripheral, peer: address, type: .random), now: now)
        }

        /// An ATT PDU from the peer on `handle`.
        mutating func att(_ pdu: [UInt8], handle: UInt16, now: ContinuousClock.Instant) {
            let l2cap = [UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), 0x04, 0x00] + pdu
            let acl = [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, UInt8(l2cap.count & 0xFF), UInt8(l2cap.count >> 8)] + l2cap
            run(engine.receive(H4Packet(type: .acl, body: acl), now: now), now: now)
        }

        mutating func tick(_ now: ContinuousClock.Instant) { run(engine.tick(now: now), now: now) }

        func disconnects() -> [(handle: UInt16, reason: UInt8)] {
            controller.received.filter { $0.opcode == .disconnect }.map { (UInt16($0.parameters[0]) | UInt16($0.parameters[1]) << 8, $0.parameters[2]) }
        }
    }

    @Test func anIdlePhoneIsDroppedThenRefusedWhileAWritingPhoneStays() throws {
        var rig = try Rig()
        let signal = try #require(try Fixture.database().characteristic(service: Fixture.heraldService, uuid: Fixture.signal)).valueHandle
        rig.connects(Self.idler, handle: 0x41, now: Self.at(1))
        rig.connects(Self.writer, handle: 0x42, now: Self.at(1))
        // The idler exchanges the MTU and reads the device name: nothing useful.
        rig.att([0x02, 0x00, 0x02], handle: 0x41, now: Self.at(2))
        rig.att([0x0A, 0x03, 0x00], handle: 0x41, now: Self.at(3))
        // The writer writes its signal characteristic every 3 s.
        for second in [2.0, 5, 8] {
            rig.att([0x12, UInt8(signal & 0xFF), UInt8(signal >> 8), 0x02, 0xC4, 0xFF], handle: 0x42, now: Self.at(second))
        }
        rig.tick(Self.at(5.9))
        #expect(rig.disconnects().isEmpty)
        rig.tick(Self.at(6))
        #expect(rig.disconnects().map(\.handle) == [0x41])
        #expect(rig.disconnects().first?.reason == HCIStatus.remoteUserTerminated.rawValue)
        #expect(rig.emitted.contains { if case .disconnected(let link, _) = $0 { link.handle == 0x41 } else { false } })
        #expect(rig.engine.openLinks.map(\.handle) == [0x42])
        rig.tick(Self.at(10))
        #expect(rig.engine.openLinks.map(\.handle) == [0x42])

        // The idler comes straight back: refused with 0x14, never reported connected.
        rig.emitted = []
        rig.connects(Self.idler, handle: 0x43, now: Self.at(7))
        #expect(rig.disconnects().last.map { [$0.handle: $0.reason] } == [0x43: HCIStatus.remoteLowResources.rawValue])
        #expect(!rig.emitted.contains { if case .connected = $0 { true } else { false } })
        #expect(!rig.emitted.contains { if case .disconnected = $0 { true } else { false } })
        #expect(rig.engine.inboundCounters == .init(idleDrops: 1, refusals: 1))
        // After its backoff it gets in again.
        rig.connects(Self.idler, handle: 0x44, now: Self.at(36))
        #expect(rig.emitted.contains { if case .connected(let link) = $0 { link.handle == 0x44 } else { false } })
    }

    /// Three holders take every link (the cap is 3): the node's own connection is refused at
    /// the cap until the idle limit drops them; then it gets its link, and the holders coming
    /// straight back are refused.
    @Test func holdersOfEveryLinkAreDroppedAndTheNodeConnectsAgain() throws {
        var rig = try Rig(maximumConnections: 3)
        let holders = (1...3).map { BluetoothAddress(rawValue: 0xC000_0000_00C0 + UInt64($0)) }
        for (n, holder) in holders.enumerated() { rig.connects(holder, handle: 0x41 + UInt16(n), now: Self.at(1)) }
        #expect(rig.engine.openLinks.count == 3)
        let phone = BluetoothAddress(rawValue: 0xC000_0000_00D1)
        rig.controller.connectBehaviour = .connect(handle: 0x50)
        let refused = rig.engine.perform(.connect(phone, .random, timeout: .seconds(5)), id: HostRequestID(rawValue: 1), now: Self.at(2))
        #expect(refused.contains { if case .reply(_, .failure(.connectionFailed(.connectionLimitExceeded))) = $0 { true } else { false } }, "\(refused)")
        rig.run(refused, now: Self.at(2))
        rig.tick(Self.at(6))
        #expect(Set(rig.disconnects().map(\.handle)) == [0x41, 0x42, 0x43])
        #expect(rig.engine.openLinks.isEmpty)
        for (n, holder) in holders.enumerated() { rig.connects(holder, handle: 0x44 + UInt16(n), now: Self.at(6.5)) }
        #expect(rig.engine.openLinks.isEmpty)
        #expect(rig.engine.inboundCounters == .init(idleDrops: 3, refusals: 3))
        let connect = rig.engine.perform(.connect(phone, .random, timeout: .seconds(5)), id: HostRequestID(rawValue: 2), now: Self.at(7))
        rig.run(connect, now: Self.at(7))
        #expect(rig.engine.openLinks.map(\.peerAddress) == [phone])
    }

    /// Issue 15, item 4: a peer that never answers the node's first ATT request (the MTU
    /// exchange) loses the link at the request timeout, not ATT's 30 s.
    @Test func aRequestWithoutAResponseIsAbandonedAndTheLinkClosedAtTheRequestTimeout() throws {
        var rig = try Rig()
        let peer = BluetoothAddress(rawValue: 0xC000_0000_00B1)
        rig.controller.connectBehaviour = .connect(handle: 0x51)
        rig.controller.initiating = nil
        let connect = HostRequestID(rawValue: 1)
        rig.run(rig.engine.perform(.connect(peer, .random, timeout: .seconds(5)), id: connect, now: Self.at(1)), now: Self.at(1))
        let link = try #require(rig.engine.openLinks.first { $0.peerAddress == peer })
        var replies: [HostAction] = []
        let mtu = HostRequestID(rawValue: 2)
        replies += rig.engine.perform(.gatt(.exchangeMTU(), link: link.handle), id: mtu, now: Self.at(2))
        #expect(rig.engine.nextDeadline.map { $0 <= Self.at(12) } == true)
        let early = rig.engine.tick(now: Self.at(11.9))
        #expect(!early.contains { if case .reply(mtu, _) = $0 { true } else { false } })
        let late = rig.engine.tick(now: Self.at(12))
        #expect(late.contains { if case .reply(mtu, .failure(.gatt(.timedOut))) = $0 { true } else { false } }, "\(late)")
        rig.run(late, now: Self.at(12))
        #expect(rig.disconnects().map(\.handle) == [0x51])
        #expect(rig.engine.openLinks.isEmpty)
    }
}
