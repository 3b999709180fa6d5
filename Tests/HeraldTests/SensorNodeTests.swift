import BLEHost
import Testing

@testable import Herald

/// Drives a ``SensorNode`` through a scripted timeline and keeps what it asked for.
struct NodeHarness {
    var node: SensorNode
    var actions = [NodeAction]()

    init(_ configure: (inout NodeConfiguration) -> Void = { _ in }) {
        var configuration = NodeConfiguration()
        configure(&configuration)
        node = SensorNode(configuration: configuration)
    }

    static func address(_ n: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: 0x4000_0000_0000 | n) }

    /// Takes the actions produced since the last call.
    mutating func take() -> [NodeAction] {
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }

    mutating func advert(_ n: UInt64, _ advertClass: AdvertClass, rssi: Int? = -60, connectable: Bool? = true, at now: Double) -> [NodeAction] {
        node.advert(
            AdvertSighting(address: Self.address(n), addressType: .random, connectable: connectable, rssi: rssi, advertClass: advertClass),
            now: now, into: &actions)
        return take()
    }

    mutating func tick(_ now: Double) -> [NodeAction] {
        node.tick(now: now, into: &actions)
        return take()
    }

    mutating func link(_ event: LinkEvent, _ id: TargetID, at now: Double) -> [NodeAction] {
        node.link(event, target: id, now: now, into: &actions)
        return take()
    }

    mutating func write(_ write: SignalWrite, from n: UInt64, at now: Double) -> [NodeAction] {
        node.signalWrite(write, from: Self.address(n), addressType: .random, now: now, into: &actions)
        return take()
    }

    /// Runs a whole read: connect (from a tick), connected, discovered, payload read, disconnected.
    mutating func read(_ id: TargetID, services: DiscoveredServices, payload: [UInt8], at now: Double) -> [NodeAction] {
        var all = [NodeAction]()
        all += link(.connected, id, at: now)
        all += link(.discovered(services), id, at: now)
        all += link(.payloadRead(payload), id, at: now)
        all += link(.disconnected, id, at: now)
        return all
    }
}

extension [NodeAction] {
    var events: [SensorEvent] { compactMap { if case .event(let e) = $0 { return e } else { return nil } } }
    var connects: [TargetID] { compactMap { if case .connect(let t) = $0 { return t.id } else { return nil } } }
    var disconnects: [TargetID] { compactMap { if case .disconnect(let t) = $0 { return t.id } else { return nil } } }
    var reads: [(SensorPayload, [SensorEvent.Measurement])] {
        events.compactMap { if case .read(_, let p, let earlier, _) = $0 { return (p, earlier) } else { return nil } }
    }
    var measures: [(TargetID, Int?, SensorPayload?)] {
        events.compactMap { if case .measure(let t, let rssi, let p, _, _) = $0 { return (t.id, rssi, p) } else { return nil } }
    }
    var detects: [Target] { events.compactMap { if case .detect(let t, _) = $0 { return t } else { return nil } } }
}

let pseudoA = PseudoDeviceAddress(int64: 0x0102_0304_0506_0708)
let androidAdvert = AdvertClass.herald(pseudoAddress: pseudoA, apple: false)
let phone1 = TestPayload.make(identifier: 1), phone2 = TestPayload.make(identifier: 2), phone3 = TestPayload.make(identifier: 3)

@Suite struct SensorNodeReadTests {
    @Test func androidPhoneIsDetectedConnectedReadAndMeasured() throws {
        var h = NodeHarness()
        let first = h.advert(1, androidAdvert, rssi: -70, at: 0)
        let target = try #require(first.detects.first)
        #expect(target.pseudoAddress == pseudoA)
        #expect(first.measures.count == 1 && first.measures[0].2 == nil)

        #expect(h.advert(1, androidAdvert, rssi: -65, at: 0.5).detects.isEmpty)
        #expect(h.tick(1) == [.connect(target)])
        #expect(h.link(.connected, target.id, at: 2) == [.discover(target, openTrace: false)])
        #expect(h.link(.discovered(.android), target.id, at: 2.1) == [.readPayload(target, .herald)])
        let read = h.link(.payloadRead(phone1), target.id, at: 2.5)
        #expect(read.reads.count == 1)
        #expect(read.reads[0].0 == SensorPayload(kind: .herald, bytes: phone1))
        // Both measurements taken before the read are handed over for attribution.
        #expect(read.reads[0].1 == [.init(time: 0, rssi: -70), .init(time: 0.5, rssi: -65)])
        #expect(read.disconnects == [target.id])
        #expect(h.link(.disconnected, target.id, at: 2.6).isEmpty)

        let later = h.advert(1, androidAdvert, rssi: -61, at: 3)
        #expect(later.measures.map(\.2) == [SensorPayload(kind: .herald, bytes: phone1)])
        #expect(h.tick(4).isEmpty)  // payload known, never re-read by default
        #expect(h.node.counters.payloadsRead == 1)
    }

    @Test func pseudoAddressFollowsAnAddressRotation() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.read(target.id, services: .android, payload: phone1, at: 1)

        let rotated = h.advert(2, androidAdvert, at: 100)
        #expect(rotated.detects.isEmpty)
        #expect(rotated.measures.count == 1)
        #expect(rotated.measures[0].0 == target.id)
        #expect(rotated.measures[0].2?.bytes == phone1)
        #expect(h.node.target(target.id)?.address == NodeHarness.address(2))
        #expect(h.tick(101).isEmpty)
        // The old address no longer leads to the target; a stranger there is someone else.
        #expect(h.advert(1, .herald(pseudoAddress: nil, apple: false), at: 102).detects.count == 1)
    }

    @Test func aNewPseudoAddressAtAKnownAddressIsIndexed() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, .herald(pseudoAddress: nil, apple: false), at: 0).detects.first)
        _ = h.advert(1, androidAdvert, at: 1)
        #expect(h.node.target(target.id)?.pseudoAddress == pseudoA)
        #expect(h.advert(7, androidAdvert, at: 2).measures.first?.0 == target.id)
    }

    @Test func backgroundIPhoneIsConfirmedByDiscovery() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(5, .apple, at: 0).detects.first)
        #expect(h.tick(0).connects == [target.id])
        let read = h.read(target.id, services: .iPhone, payload: phone2, at: 1)
        #expect(read.reads.first?.0.bytes == phone2)
        #expect(h.tick(2).isEmpty)
    }

    @Test func appleDeviceWithoutHeraldIsLeftAlone() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(5, .apple, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.link(.connected, target.id, at: 1)
        #expect(h.link(.discovered(.none), target.id, at: 1) == [.disconnect(target)])
        _ = h.link(.disconnected, target.id, at: 1)
        #expect(h.node.counters.notHerald == 1)
        for t in stride(from: 2.0, to: 100, by: 5) {
            #expect(h.advert(5, .apple, at: t).isEmpty)  // no more events either
            #expect(h.tick(t).isEmpty)
        }
    }

    @Test func longestWaitingUnreadTargetIsReadFirstWhateverItsSource() throws {
        var h = NodeHarness()
        let apple = try #require(h.advert(1, .apple, at: 0).detects.first)
        let herald = try #require(h.advert(2, .herald(pseudoAddress: nil, apple: false), at: 1).detects.first)
        #expect(h.tick(2).connects == [apple.id])
        _ = h.read(apple.id, services: .iPhone, payload: phone1, at: 3)
        #expect(h.tick(4).connects == [herald.id])
    }

    @Test func rssiBeforeTheReadIsAttributedAndCapped() throws {
        var h = NodeHarness { $0.maximumBufferedMeasurements = 4 }
        let target = try #require(h.advert(1, .apple, rssi: -80, at: 0).detects.first)
        for t in 1...5 { _ = h.advert(1, .apple, rssi: -80 + t, at: Double(t)) }
        _ = h.tick(6)
        let read = h.read(target.id, services: .iPhone, payload: phone1, at: 7)
        // Six measurements into four places: thinned when full, the first and the latest kept.
        #expect(read.reads.first?.1.map(\.time) == [0, 3, 4, 5])
    }

    /// A phone read long after it arrived: its kept measurements span the whole wait evenly,
    /// so the diary sees no gap it would take for a check-out.
    @Test func measurementsKeptForALateReadSpanTheWait() throws {
        var h = NodeHarness { $0.maximumBufferedMeasurements = 32 }
        let target = try #require(h.advert(1, .apple, rssi: -70, at: 0).detects.first)
        var t = 0.0
        var k = 0
        while t < 1200 {
            k += 1
            t += [0.3, 1.1, 0.7, 1.4][k % 4]
            _ = h.advert(1, .apple, rssi: -70, at: t)
        }
        _ = h.tick(t)
        let times = try #require(h.read(target.id, services: .iPhone, payload: phone1, at: t + 0.5).reads.first?.1.map(\.time))
        #expect(times.count <= 32 && times.count >= 12)
        #expect(times.first == 0 && abs((times.last ?? 0) - t) < 0.001)
        #expect(times == times.sorted())
        let widest = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .infinity
        #expect(widest <= 1200 / 8, "widest gap \(widest) s")
    }

    @Test func unmeasuredRSSIStaysNil() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, androidAdvert, rssi: nil, at: 0).detects.first)
        _ = h.tick(0)
        let read = h.read(target.id, services: .android, payload: phone1, at: 1)
        #expect(read.reads.first?.1 == [.init(time: 0, rssi: nil)])
    }

    @Test func otherVenueBeaconsAreNotReported() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(9, .herald(pseudoAddress: nil, apple: false), at: 0).detects.first)
        _ = h.tick(0)
        let beacon = try BeaconPayload(country: 826, state: 4, code: 1, name: "Next door").encoded()
        let read = h.read(target.id, services: .android, payload: beacon, at: 1)
        #expect(read.reads.isEmpty)
        #expect(h.advert(9, .herald(pseudoAddress: nil, apple: false), at: 2).events.isEmpty)
        #expect(h.tick(3).isEmpty)
        #expect(h.node.counters.venueBeacons == 1)

        var recording = NodeHarness { $0.recordVenueBeacons = true }
        let other = try #require(recording.advert(9, .herald(pseudoAddress: nil, apple: false), at: 0).detects.first)
        _ = recording.tick(0)
        #expect(recording.read(other.id, services: .android, payload: beacon, at: 1).reads.count == 1)
    }

    @Test func rereadOnlyWhenConfigured() throws {
        var h = NodeHarness { $0.payloadUpdateInterval = 60 }
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.read(target.id, services: .android, payload: phone1, at: 1)
        _ = h.advert(1, androidAdvert, at: 60)
        #expect(h.tick(60).isEmpty)
        _ = h.advert(1, androidAdvert, at: 61)
        #expect(h.tick(61).connects == [target.id])
        // Same payload again: no new read event.
        #expect(h.read(target.id, services: .android, payload: phone1, at: 62).reads.isEmpty)
        _ = h.advert(1, androidAdvert, at: 122)
        _ = h.tick(122)
        #expect(h.read(target.id, services: .android, payload: phone2, at: 123).reads.first?.0.bytes == phone2)
    }

    @Test func gaenPayloadComesFromTheAdvert() throws {
        let rpi = Hex.decode("8be6cd371c5c891604bfbe49df845096")!, aem = Hex.decode("72033874")!
        let advert = try GAENAdvert(rpi: rpi, metadata: aem)
        var h = NodeHarness()
        let first = h.advert(3, .gaen(advert), rssi: -75, connectable: false, at: 0)
        #expect(first.detects.count == 1)
        #expect(first.reads.map(\.0) == [SensorPayload(kind: .gaen, bytes: rpi)])
        #expect(first.measures.map(\.2) == [SensorPayload(kind: .gaen, bytes: rpi)])
        // The metadata travels with the identifier but is not part of it.
        #expect(first.reads.map(\.0.metadata) == [aem])
        let again = h.advert(3, .gaen(advert), rssi: -74, connectable: false, at: 1)
        #expect(again.reads.isEmpty && again.measures.count == 1)
        #expect(h.tick(2).isEmpty)
    }

    @Test func advertProtocolPayload() throws {
        var h = NodeHarness()
        let data: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF]
        #expect(h.advert(3, .advertProtocol(payload: data[...]), at: 0).reads.map(\.0) == [SensorPayload(kind: .advert, bytes: data)])
        #expect(h.advert(3, .advertProtocol(payload: data[...]), at: 1).reads.isEmpty)
    }

    @Test func openTraceIsReadFromItsCharacteristic() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(4, .openTrace, at: 0).detects.first)
        _ = h.tick(0)
        #expect(h.link(.connected, target.id, at: 1) == [.discover(target, openTrace: true)])
        #expect(h.link(.discovered(DiscoveredServices(heraldPayload: false, signal: nil, openTrace: true)), target.id, at: 1) == [.readPayload(target, .openTrace)])
        #expect(h.link(.payloadRead([0x90, 1, 2]), target.id, at: 2).reads.first?.0 == SensorPayload(kind: .opentrace, bytes: [0x90, 1, 2]))
    }

    @Test func scanResponsesAndAccessoryMessagesOfKnownTargetsStillMeasure() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, .apple, at: 0).detects.first)
        #expect(h.advert(1, .ignored(.unrelated), connectable: nil, at: 1).measures.first?.0 == target.id)
        #expect(h.advert(1, .ignored(.appleAccessory), at: 2).measures.first?.0 == target.id)
        #expect(h.advert(2, .ignored(.appleAccessory), at: 3).isEmpty)
        #expect(h.advert(3, .ignored(.unrelated), at: 3).isEmpty)
        #expect(h.node.counters.appleAccessories == 1 && h.node.counters.advertsIgnored == 2)
    }
}

@Suite struct SensorNodeConnectionTests {
    @Test func oneAttemptAtATimeWithinTheQuota() {
        var h = NodeHarness { $0.connectingShare = 0.5 }
        for n in 1...20 { _ = h.advert(UInt64(n), .herald(pseudoAddress: nil, apple: false), at: 0) }
        let first = h.tick(1).connects
        #expect(first.count == 1)
        #expect(h.tick(1.5).isEmpty)  // still connecting
        // The attempt took a second: scanning gets as long again before the next one.
        #expect(h.link(.connected, first[0], at: 2).connects.isEmpty)
        #expect(h.tick(2.9).isEmpty)
        #expect(h.tick(3).connects.count == 1)
    }

    @Test func quotaLimitsConcurrentSessions() {
        var h = NodeHarness { $0.concurrentConnectionAttempts = 50 }
        for n in 1...20 { _ = h.advert(UInt64(n), .herald(pseudoAddress: nil, apple: false), at: 0) }
        let started = h.tick(1).connects
        #expect(started.count == 12)
        for id in started { _ = h.link(.connected, id, at: 2) }
        #expect(h.tick(2).isEmpty)
        _ = h.link(.discovered(.android), started[0], at: 3)
        _ = h.link(.payloadRead(phone1), started[0], at: 3)
        #expect(h.tick(3).isEmpty)  // disconnecting still holds the slot
        #expect(h.link(.disconnected, started[0], at: 4).connects.count == 1)  // the freed slot, at once
        #expect(h.tick(4).isEmpty)
    }

    @Test func attemptTimeoutBacksOffThenGivesUp() throws {
        var h = NodeHarness { $0.maximumConnectionFailures = 3 }
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        #expect(h.tick(0).connects == [target.id])
        _ = h.advert(1, androidAdvert, at: 11)
        #expect(h.tick(11.9).isEmpty)
        #expect(h.tick(12) == [.disconnect(target)])  // 12 s attempt timeout
        #expect(h.node.counters.connectionTimeouts == 1)
        // A late report for the abandoned attempt is ignored.
        #expect(h.link(.connected, target.id, at: 12.5).isEmpty)
        #expect(h.node.counters.staleLinkEvents == 1)

        // Backoff 12 s after the first failure, 24 s after the second, then no more.
        var connects = [Double]()
        for t in stride(from: 12.0, through: 200, by: 1) {
            _ = h.advert(1, androidAdvert, at: t)
            if !h.tick(t).connects.isEmpty {
                connects.append(t)
                _ = h.link(.connectFailed, target.id, at: t)
            }
        }
        #expect(connects == [24, 48])
    }

    @Test func sessionTimeout() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.link(.connected, target.id, at: 1)
        #expect(h.tick(30.9).isEmpty)
        #expect(h.tick(31) == [.disconnect(target)])
        #expect(h.node.counters.connectionFailures == 1)
    }

    @Test func onlyRecentlySeenConnectableTargets() {
        var h = NodeHarness()
        _ = h.advert(1, androidAdvert, connectable: false, at: 0)
        #expect(h.tick(0).isEmpty)
        _ = h.advert(1, androidAdvert, connectable: nil, at: 1)  // a scan response keeps "not connectable"
        #expect(h.tick(1).isEmpty)
        _ = h.advert(1, androidAdvert, connectable: true, at: 2)
        #expect(h.tick(12.5).isEmpty)  // heard 10.5 s ago
        _ = h.advert(1, androidAdvert, at: 13)
        #expect(h.tick(13).connects.count == 1)
    }

    @Test func failedReadsBackOff() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.link(.connected, target.id, at: 1)
        _ = h.link(.discovered(.android), target.id, at: 1)
        #expect(h.link(.readFailed, target.id, at: 2) == [.disconnect(target)])
        _ = h.link(.disconnected, target.id, at: 2)
        _ = h.advert(1, androidAdvert, at: 13)
        #expect(h.tick(13).isEmpty)
        _ = h.advert(1, androidAdvert, at: 14)
        #expect(h.tick(14).connects.count == 1)
    }

    @Test func forgetsTargetsUnseenForTheCleanInterval() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, androidAdvert, connectable: false, at: 0).detects.first)
        _ = h.tick(1799)
        #expect(h.node.targetCount == 1)
        _ = h.tick(1800)
        #expect(h.node.targetCount == 0)
        #expect(h.node.target(target.id) == nil)
        #expect(h.advert(1, androidAdvert, at: 1801).detects.count == 1)
        #expect(h.node.counters.targetsForgotten == 1)
    }

    @Test func targetsWithTheirPayloadInTheAdvertAreForgottenSooner() throws {
        var h = NodeHarness()
        let gaen = AdvertClass.gaen(try GAENAdvert(serviceData: [UInt8](repeating: 1, count: 20)[...]))
        let phone = try #require(h.advert(1, gaen, at: 0).detects.first)
        let herald = try #require(h.advert(2, androidAdvert, connectable: false, at: 0).detects.first)
        _ = h.advert(1, gaen, at: 100)  // heard again: its time runs from here
        _ = h.tick(399)
        #expect(h.node.target(phone.id) != nil)
        _ = h.tick(400)
        #expect(h.node.target(phone.id) == nil && h.node.target(herald.id) != nil)
        #expect(h.node.counters.targetsForgotten == 1)
        // Heard again, it is a new target whose payload comes with its first advert.
        let again = h.advert(1, gaen, at: 401)
        #expect(again.detects.count == 1 && again.reads.count == 1)
        _ = h.tick(1799)
        #expect(h.node.target(herald.id) != nil)
        _ = h.tick(1800)
        #expect(h.node.target(herald.id) == nil && h.node.counters.targetsForgotten == 3)
    }

    @Test func aTargetThatTurnsOutToCarryItsPayloadIsForgottenSooner() throws {
        var h = NodeHarness { $0.advertTargetCleanInterval = 60 }
        let target = try #require(h.advert(1, .apple, connectable: false, at: 0).detects.first)
        _ = h.advert(1, .advertProtocol(payload: [9, 9][...]), at: 10)
        _ = h.tick(69)
        #expect(h.node.target(target.id) != nil)
        _ = h.tick(70)
        #expect(h.node.target(target.id) == nil)
    }

    @Test func aTargetInASessionIsForgottenOnlyAfterTheSessionEnds() throws {
        var h = NodeHarness { $0.peripheralCleanInterval = 60 }
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        #expect(h.tick(0).connects == [target.id])
        _ = h.link(.connected, target.id, at: 1)
        _ = h.tick(60)
        #expect(h.node.target(target.id) != nil)
        #expect(h.link(.disconnected, target.id, at: 61).isEmpty)
        _ = h.tick(61)
        #expect(h.node.target(target.id) == nil)
    }

    @Test func aFullTableMakesRoomByForgettingTheTargetHeardLeastRecently() throws {
        var h = NodeHarness { $0.maximumTargets = 20 }
        // A phone in a session, a phone heard every second, and a flood of addresses heard once
        // each, ten a second (a "BLE spam" gadget).
        let busy = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        #expect(h.tick(0).connects == [busy.id])
        _ = h.link(.connected, busy.id, at: 0.5)
        let regular = try #require(h.advert(2, .apple, at: 1).detects.first)
        var flood = [TargetID]()
        for n in 0..<200 {
            let now = 2 + Double(n) * 0.1
            if n % 10 == 0 { _ = h.advert(2, .apple, at: now - 0.05) }
            flood += h.advert(1000 + UInt64(n), .apple, at: now).detects.map(\.id)
            #expect(h.node.targetCount <= 20)
        }
        #expect(flood.count == 200)
        #expect(h.node.target(busy.id) != nil)  // in a session: kept however long unheard
        #expect(h.node.target(regular.id) != nil)  // heard more often than the flood turns the table over
        #expect(flood[182...].allSatisfy { h.node.target($0) != nil })
        #expect(flood[..<182].allSatisfy { h.node.target($0) == nil })
        #expect(h.node.counters.targetsEvicted == 182 && h.node.counters.targetsForgotten == 0)
    }

    @Test func aTableFullOfSessionsStillTakesANewTarget() throws {
        var h = NodeHarness { $0.maximumTargets = 1 }
        let busy = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        #expect(h.tick(0).connects == [busy.id])
        #expect(h.advert(2, .apple, at: 1).detects.count == 1)
        #expect(h.node.targetCount == 2 && h.node.target(busy.id) != nil && h.node.counters.targetsEvicted == 0)
        // Once a target without a session is there, the next one takes its place.
        let third = try #require(h.advert(3, .apple, at: 2).detects.first)
        #expect(h.node.targetCount == 2 && h.node.target(third.id) != nil && h.node.counters.targetsEvicted == 1)
    }

    @Test func bluetoothLossDropsSessionsWithoutBlame() throws {
        var h = NodeHarness()
        let target = try #require(h.advert(1, androidAdvert, at: 0).detects.first)
        _ = h.tick(0)
        var actions = [NodeAction]()
        h.node.bluetoothState(.unavailable("reset"), now: 1, into: &actions)
        #expect(actions == [.event(.bluetoothState(.unavailable("reset"), time: 1))])
        _ = h.advert(1, androidAdvert, at: 2)
        #expect(h.tick(2).connects == [target.id])
    }
}

@Suite struct SensorNodeSignalWriteTests {
    @Test func aPhoneThatOnlyWritesIsRecorded() throws {
        var h = NodeHarness()
        let first = h.write(.payload(phone1), from: 7, at: 0)
        let target = try #require(first.detects.first)
        #expect(first.reads.map(\.0) == [SensorPayload(kind: .herald, bytes: phone1)])
        #expect(first.reads.first?.1 == [])
        #expect(first.measures.map(\.2) == [SensorPayload(kind: .herald, bytes: phone1)])

        let rssi = h.write(.rssi(-58), from: 7, at: 1)
        #expect(rssi.measures.count == 1)
        #expect(rssi.measures[0].0 == target.id && rssi.measures[0].1 == -58)
        #expect(rssi.measures[0].2?.bytes == phone1)
        #expect(h.tick(2).isEmpty)  // a writer is never connected to
    }

    @Test func rssiWrittenBeforeThePayloadIsAttributed() throws {
        var h = NodeHarness()
        _ = h.write(.rssi(-70), from: 7, at: 0)
        _ = h.write(.wake, from: 7, at: 1)
        let read = h.write(.payload(phone1), from: 7, at: 2)
        #expect(read.reads.first?.1 == [.init(time: 0, rssi: -70), .init(time: 1, rssi: nil)])
    }

    @Test func payloadSharingIsSplitByTheWritersLength() throws {
        var h = NodeHarness()
        _ = h.write(.payload(phone1), from: 7, at: 0)
        let share = h.write(.payloadSharing(rssi: -66, payloads: phone2 + phone3), from: 7, at: 1)
        let shared = share.events.compactMap { event -> [SensorPayload]? in
            if case .share(_, let payloads, let rssi, _) = event, rssi == -66 { return payloads } else { return nil }
        }
        #expect(shared == [[SensorPayload(kind: .herald, bytes: phone2), SensorPayload(kind: .herald, bytes: phone3)]])
        #expect(share.measures.first?.1 == -66)

        _ = h.write(.payloadSharing(rssi: -66, payloads: [0x30, 1, 2, 3, 4]), from: 8, at: 2)
        #expect(h.node.counters.sharesUnsplittable == 1)
    }

    @Test func immediateUnknownAndRejectedWrites() {
        var h = NodeHarness()
        let immediate = h.write(.immediate([0x68, 0x69]), from: 7, at: 0)
        #expect(immediate.contains { $0 == .immediateData(immediate.detects[0], [0x68, 0x69]) })
        _ = h.write(.unknown(action: SignalAction(rawValue: 9), data: []), from: 7, at: 1)
        h.node.signalWriteRejected()
        #expect(h.node.counters.signalWrites == 2)
        #expect(h.node.counters.signalWritesUnknown == 1)
        #expect(h.node.counters.signalWritesRejected == 1)
    }

    @Test func aWriterSeenAdvertisingLaterIsTheSameTarget() throws {
        var h = NodeHarness()
        let target = try #require(h.write(.payload(phone1), from: 7, at: 0).detects.first)
        let advert = h.advert(7, .herald(pseudoAddress: nil, apple: false), at: 1)
        #expect(advert.detects.isEmpty)
        #expect(advert.measures.first?.0 == target.id)
        #expect(h.tick(1).isEmpty)  // payload already known
    }
}

@Suite struct PayloadSharingTests {
    /// The sharing window's order is the byte-wise order `lexicographicallyPrecedes` gives.
    @Test func payloadOrderIsByteWise() {
        var state: UInt64 = 42
        func byte() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1
            return UInt8(truncatingIfNeeded: state >> 61)  // 0...7: many equal prefixes
        }
        for _ in 0..<2000 {
            let a = (0..<Int(byte())).map { _ in byte() }
            let b = (0..<Int(byte())).map { _ in byte() }
            #expect(SensorNode.precedes(a, b) == a.lexicographicallyPrecedes(b), "\(a) \(b)")
            #expect(!SensorNode.precedes(a, a))
        }
    }

    /// Two iPhones read and confirmed, seen at `now`.
    func twoIPhones(_ h: inout NodeHarness) throws -> (Target, Target) {
        let a = try #require(h.advert(1, .apple, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.read(a.id, services: .iPhone, payload: phone1, at: 1)
        let b = try #require(h.advert(2, .apple, at: 1).detects.first)
        _ = h.tick(2)  // A's attempt took a second: scanning gets one too
        _ = h.read(b.id, services: .iPhone, payload: phone2, at: 2)
        #expect(h.node.payload(of: b.id)?.bytes == phone2)
        return (a, b)
    }

    @Test func sharesOtherIPhonesPayloadsAtMostEvery15Seconds() throws {
        var h = NodeHarness()
        let (a, b) = try twoIPhones(&h)
        _ = h.advert(1, .apple, rssi: -55, at: 3)
        _ = h.advert(2, .apple, at: 3)
        let connects = h.tick(3).connects
        #expect(connects == [a.id])
        _ = h.link(.connected, a.id, at: 4)
        // A's payload is known: straight from discovery to the share, with A's RSSI.
        #expect(h.link(.discovered(.iPhone), a.id, at: 4) == [.writeSignal(a, .payloadSharing(rssi: -55, payloads: phone2))])
        // The controller is free again (A's attempt ended at 4, scanning had its second): B,
        // next in line, without waiting for a tick.
        #expect(h.link(.signalWritten, a.id, at: 5) == [.disconnect(a), .connect(b)])
        _ = h.link(.disconnected, a.id, at: 5)
        _ = h.link(.connected, b.id, at: 6)
        #expect(h.link(.discovered(.iPhone), b.id, at: 6) == [.writeSignal(b, .payloadSharing(rssi: -60, payloads: phone1))])
        _ = h.link(.signalWritten, b.id, at: 6)
        _ = h.link(.disconnected, b.id, at: 6)

        _ = h.advert(1, .apple, at: 19)
        _ = h.advert(2, .apple, at: 19)
        #expect(h.tick(19).isEmpty)  // A was shared with at 5
        _ = h.advert(1, .apple, at: 20)
        _ = h.advert(2, .apple, at: 20)
        #expect(h.tick(20).connects == [a.id])
        #expect(h.node.counters.sharesWritten == 2)
    }

    @Test func onlyPayloadsSeenWithinTheExpiry() throws {
        var h = NodeHarness()
        let (a, _) = try twoIPhones(&h)
        // B is not seen again; A keeps advertising past the 5 minute expiry.
        _ = h.advert(1, .apple, at: 302)
        #expect(h.tick(302).isEmpty)
        #expect(h.node.sharingData(for: try #require(h.node.table[a.id]), now: 302) == nil)
    }

    @Test func androidPhonesAndMismatchedLengthsAreNotShared() throws {
        var h = NodeHarness()
        let a = try #require(h.advert(1, .apple, at: 0).detects.first)
        _ = h.tick(0)
        _ = h.read(a.id, services: .iPhone, payload: phone1, at: 1)
        let android = try #require(h.advert(2, androidAdvert, at: 1).detects.first)
        _ = h.tick(2)
        _ = h.read(android.id, services: .android, payload: phone2, at: 2)
        let c = try #require(h.advert(3, .apple, at: 2).detects.first)
        _ = h.tick(3)
        _ = h.read(c.id, services: .iPhone, payload: [0x10] + [UInt8](repeating: 3, count: 20), at: 3)
        #expect(h.node.payload(of: android.id) != nil && h.node.payload(of: c.id) != nil)
        for n: UInt64 in 1...3 { _ = h.advert(n, n == 2 ? androidAdvert : .apple, at: 4) }
        #expect(h.tick(4).isEmpty)
    }

    @Test func sharingOff() throws {
        var h = NodeHarness { $0.payloadSharing = false }
        _ = try twoIPhones(&h)
        _ = h.advert(1, .apple, at: 3)
        _ = h.advert(2, .apple, at: 3)
        #expect(h.tick(3).isEmpty)
    }

    @Test func aPayloadCarriedByTwoTargetsIsSharedOnce() throws {
        var h = NodeHarness()
        let (a, _) = try twoIPhones(&h)
        // B's phone seen again at a new address (a new target) and read again: the same payload.
        let again = try #require(h.advert(3, .apple, at: 2).detects.first)
        _ = h.tick(3)
        _ = h.read(again.id, services: .iPhone, payload: phone2, at: 3)
        #expect(h.node.payload(of: again.id)?.bytes == phone2)
        for n: UInt64 in 1...3 { _ = h.advert(n, .apple, at: 4) }
        #expect(h.node.sharingData(for: try #require(h.node.table[a.id]), now: 4) == phone2)
    }

    @Test func manyPayloadsRotateThroughWrites() throws {
        var h = NodeHarness()
        var ids = [TargetID]()
        for n: UInt64 in 1...6 {
            let t = try #require(h.advert(n, .apple, at: Double(n)).detects.first)
            _ = h.tick(Double(n))
            _ = h.read(t.id, services: .iPhone, payload: TestPayload.make(identifier: Int32(n)), at: Double(n))
            ids.append(t.id)
        }
        for n: UInt64 in 1...6 { _ = h.advert(n, .apple, at: 10) }
        let first = try #require(h.node.table[ids[0]])
        let window1 = try #require(h.node.sharingData(for: first, now: 10))
        #expect(window1.count == 3 * 129)  // three 129-byte payloads fit in one write
        var rotated = first
        rotated.shareRound = 1
        let window2 = try #require(h.node.sharingData(for: rotated, now: 10))
        let seen = Set(SharedPayloads.split((window1 + window2)[...], payloadLength: 129).map { TestPayload.identifier(of: $0) })
        #expect(seen == [2, 3, 4, 5, 6])
    }
}

/// Connections start when an attempt ends or a slot frees, not only at the tick; within the
/// quota, one attempt at a time, scanning's share kept, most urgent first.
@Suite struct SensorNodeSchedulingTests {
    /// A node whose attempts follow each other at once (no scanning gap).
    static func backToBack(_ configure: (inout NodeConfiguration) -> Void = { _ in }) -> NodeHarness {
        NodeHarness {
            $0.connectingShare = 1
            $0.minimumScanBetweenAttempts = 0
            configure(&$0)
        }
    }

    static let herald = AdvertClass.herald(pseudoAddress: nil, apple: false)

    @Test func theNextAttemptStartsWhenOneEndsNotAtTheNextTick() throws {
        var h = Self.backToBack()
        let ids = (1...3).compactMap { h.advert(UInt64($0), Self.herald, at: 0).detects.first?.id }
        #expect(h.tick(0).connects == [ids[0]])
        // The first link comes up: the controller is free for the next attempt.
        let connected = h.link(.connected, ids[0], at: 0.2)
        #expect(connected.connects == [ids[1]])
        #expect(connected.first == .discover(try #require(h.node.target(ids[0])), openTrace: false))
        // The second attempt fails: the third starts.
        #expect(h.link(.connectFailed, ids[1], at: 0.4).connects == [ids[2]])
        #expect(h.node.counters.connectionsStarted == 3)
    }

    @Test func aFinishedReadFreesItsSlotAtOnce() throws {
        var h = Self.backToBack { $0.concurrentConnectionQuota = 1 }
        let a = try #require(h.advert(1, Self.herald, at: 0).detects.first)
        let b = try #require(h.advert(2, Self.herald, at: 0).detects.first)
        #expect(h.tick(0).connects == [a.id])
        _ = h.link(.connected, a.id, at: 0.1)
        _ = h.link(.discovered(.android), a.id, at: 0.2)
        #expect(h.link(.payloadRead(phone1), a.id, at: 0.3) == [.event(.read(a, payload: SensorPayload(kind: .herald, bytes: phone1), earlier: [SensorEvent.Measurement(time: 0, rssi: -60)], time: 0.3)), .disconnect(a)])
        #expect(h.link(.disconnected, b.id, at: 0.35).isEmpty)  // not b's session: stale, frees nothing
        #expect(h.link(.disconnected, a.id, at: 0.4).connects == [b.id])
    }

    @Test func scanningKeepsItsShareBetweenAttempts() throws {
        // Half the time at most for attempts, at least 0.125 s of scanning.
        var h = NodeHarness {
            $0.connectingShare = 0.5
            $0.minimumScanBetweenAttempts = 0.125
        }
        let a = try #require(h.advert(1, Self.herald, at: 0).detects.first)
        let b = try #require(h.advert(2, Self.herald, at: 0).detects.first)
        let c = try #require(h.advert(3, Self.herald, at: 0).detects.first)
        #expect(h.tick(0).connects == [a.id])
        #expect(h.link(.connected, a.id, at: 0.5).connects.isEmpty)
        // The attempt took 0.5 s: the next waits as long, and starts with the first advert after.
        #expect(h.advert(9, .apple, at: 0.75).connects.isEmpty)
        #expect(h.advert(9, .apple, at: 1).connects == [b.id])
        #expect(h.link(.connectFailed, b.id, at: 1).connects.isEmpty)
        #expect(h.advert(9, .apple, at: 1.0625).connects.isEmpty)
        #expect(h.advert(9, .apple, at: 1.125).connects == [c.id])
    }

    @Test func onlyTheMinimumGapWhenTheControllerScansWhileConnecting() throws {
        var h = NodeHarness { $0.minimumScanBetweenAttempts = 0.125 }
        h.node.controllerScansWhileConnecting = true
        let a = try #require(h.advert(1, Self.herald, at: 0).detects.first)
        let b = try #require(h.advert(2, Self.herald, at: 0).detects.first)
        #expect(h.tick(0).connects == [a.id])
        // A 2 s attempt would otherwise be followed by 2/3 s of scanning.
        #expect(h.link(.connected, a.id, at: 2).connects.isEmpty)
        #expect(h.advert(9, .apple, at: 2.125).connects == [b.id])
    }

    @Test func quotaAndOneAttemptAtATimeHoldWhateverTheOrderOfOutcomes() {
        var h = Self.backToBack { $0.concurrentConnectionQuota = 3 }
        for n in 1...30 { _ = h.advert(UInt64(n), Self.herald, at: 0) }
        var connecting = Set<TargetID>(), open = Set<TargetID>()
        var mostOpen = 0, reads = 0
        func take(_ actions: [NodeAction]) {
            for id in actions.connects {
                #expect(connecting.isEmpty, "a second attempt while one is pending")
                connecting.insert(id)
            }
            mostOpen = max(mostOpen, connecting.count + open.count)
        }
        take(h.tick(0))
        // Outcomes in a fixed but mixed order: every third attempt fails, links end out of order.
        var t = 0.0, step = 0
        while reads + h.node.counters.connectionFailures < 30, t < 20 {
            t += 0.05
            step += 1
            if let id = connecting.first {
                connecting.remove(id)
                if step % 3 == 0 {
                    take(h.link(.connectFailed, id, at: t))
                } else {
                    open.insert(id)
                    take(h.link(.connected, id, at: t))
                }
            } else if let id = open.sorted(by: { ($0.rawValue * 7919) % 13 < ($1.rawValue * 7919) % 13 }).first {
                open.remove(id)
                _ = h.link(.discovered(.android), id, at: t)
                _ = h.link(.payloadRead(TestPayload.make(identifier: Int32(id.rawValue))), id, at: t)
                reads += 1
                take(h.link(.disconnected, id, at: t))
            }
        }
        #expect(mostOpen == 3)
        #expect(reads + h.node.counters.connectionFailures == 30 && h.node.counters.connectionFailures > 0)
        #expect(h.node.counters.connectionsStarted == 30)
    }

    @Test func firstReadsGoOldestFirstThenRereads() throws {
        var h = Self.backToBack { $0.payloadUpdateInterval = 100 }
        // Read at 0; due again from 100.
        let reread = try #require(h.advert(1, Self.herald, at: 0).detects.first)
        #expect(h.tick(0).connects == [reread.id])
        _ = h.read(reread.id, services: .android, payload: phone1, at: 0)
        // First seen at 2, never read (no tick until 400): waiting longest.
        let waiting = try #require(h.advert(2, Self.herald, at: 2).detects.first)
        let fresh1 = try #require(h.advert(3, .apple, at: 399).detects.first)
        let fresh2 = try #require(h.advert(4, Self.herald, at: 400).detects.first)
        for n: UInt64 in [1, 2] { _ = h.advert(n, Self.herald, at: 400) }
        var order = h.tick(400).connects
        while let last = order.last, order.count < 5 {
            let next = h.link(.connectFailed, last, at: 400).connects
            if next.isEmpty { break }
            order += next
        }
        // First reads by first sighting, the longest waiting first; re-reads after them.
        #expect(order == [waiting.id, fresh1.id, fresh2.id, reread.id])
    }

    @Test func aRefusedAttemptIsNoFailureAndWaitsForAFreeLink() throws {
        var h = Self.backToBack()
        let a = try #require(h.advert(1, Self.herald, at: 0).detects.first)
        let b = try #require(h.advert(2, Self.herald, at: 0).detects.first)
        #expect(h.tick(0).connects == [a.id])
        #expect(h.link(.connectRefused, a.id, at: 0.1).isEmpty)  // b is not tried: no link is free
        #expect(h.advert(3, .apple, at: 0.5).connects.isEmpty)
        #expect(h.node.counters.connectionFailures == 0 && h.node.counters.connectionsRefused == 1)
        #expect(h.tick(1).connects == [a.id])  // no backoff: still the first in line
        #expect(h.link(.connected, a.id, at: 1.1).connects == [b.id])
    }
}
