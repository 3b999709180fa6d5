import BLEHost
import Herald
import Testing
@testable import VenueNode

/// The driver between the host runtime and the node policy, scripted: host events, ticks and
/// request results in, sensor events, requests and notes out. No sockets, no clock.
@Suite struct NodeDriverTests {
    var driver: NodeDriver
    var out = NodeDriver.Output()
    var now = 0.0

    init() throws {
        driver = NodeDriver(node: SensorNode(), classifier: try AdvertClassifier())
    }

    static let phone = BluetoothAddress(rawValue: 0xC0_11_22_33_44_55)
    static let pseudo: [UInt8] = [1, 2, 3, 4, 5, 6]
    static let payload = TestPayload.make(identifier: 42)
    static let androidAdvert: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC, 0x09, 0xFF, 0xF1, 0x05] + pseudo
    static let appleAdvert: [UInt8] = [0x02, 0x01, 0x06, 0x14, 0xFF, 0x4C, 0x00, 0x01] + [UInt8](repeating: 0, count: 8) + [0x80] + [UInt8](repeating: 0, count: 7)
    static let centralLink = HostLink(handle: 0x40, peerAddress: phone, peerAddressType: .random, role: .central)
    static let signalCharacteristics = [
        GATTDiscoveredCharacteristic(uuid: HeraldUUIDs.androidSignalCharacteristic, properties: [.write], declarationHandle: 10, valueHandle: 11),
        GATTDiscoveredCharacteristic(uuid: HeraldUUIDs.payloadCharacteristic, properties: .read, declarationHandle: 12, valueHandle: 13),
    ]

    /// What the host's discovery procedure reports for a Herald Android phone (handles 9–13),
    /// or for a peer without any of the services asked for.
    static func discovered(_ service: BluetoothUUID? = HeraldUUIDs.service, mtu: Int = 517) -> GATTClientResult {
        guard let service else { return .discovered(GATTDiscovery(mtu: mtu, services: [])) }
        return .discovered(GATTDiscovery(mtu: mtu, services: [
            GATTDiscovery.Service(
                service: GATTDiscoveredService(uuid: service, startHandle: 9, endHandle: 13), characteristics: signalCharacteristics)
        ]))
    }

    mutating func feed(_ input: NodeDriver.Input) -> NodeDriver.Output {
        out.removeAll()
        driver.handle(input, now: now, into: &out)
        return out
    }

    mutating func advert(_ data: [UInt8], from address: BluetoothAddress = phone) -> NodeDriver.Output {
        feed(.host(.advertisingReport(LEAdvertisingReport(
            eventType: .connectableUndirected, addressType: .random, address: address, data: data[...], rawRSSI: 127))))
    }

    /// The one request in `output`, or a recorded issue.
    func onlyWork(_ output: NodeDriver.Output, sourceLocation: SourceLocation = #_sourceLocation) -> NodeDriver.HostWork? {
        #expect(output.work.count == 1, "\(output.work)", sourceLocation: sourceLocation)
        return output.work.first
    }

    func step(_ work: NodeDriver.HostWork?) -> NodeDriver.GATTStep? {
        if case .gatt(_, let step, _) = work { return step }
        return nil
    }

    /// Advertises the Android phone and runs a tick: the node asks to connect.
    mutating func connectAndroid() throws -> TargetID {
        let detected = advert(Self.androidAdvert)
        guard case .detect(let target, _)? = detected.events.first else {
            Issue.record("no detect event: \(detected.events)")
            throw CancellationError()
        }
        #expect(detected.events.count == 2)  // detect, then measure without a payload
        now = 1
        guard case .connect(let id, let address, let type, let timeout)? = onlyWork(feed(.tick)) else {
            Issue.record("no connection attempt")
            throw CancellationError()
        }
        #expect(id == target.id && address == Self.phone && type == .random && timeout == .seconds(12))
        return id
    }

    @Test mutating func anAndroidPhoneIsConnectedDiscoveredReadAndLeft() throws {
        let id = try connectAndroid()
        var work = onlyWork(feed(.result(id, .connect(.success(Self.centralLink)))))
        #expect(step(work) == .discover(openTrace: false))  // one host procedure
        work = onlyWork(feed(.result(id, .gatt(.discover(openTrace: false), .success(Self.discovered())))))
        #expect(step(work) == .readPayload(handle: 13))
        let read = feed(.result(id, .gatt(.readPayload(handle: 13), .success(.value(Self.payload)))))
        guard case .read(_, let payload, let earlier, _)? = read.events.first else {
            Issue.record("expected a read event, got \(read.events)")
            return
        }
        #expect(payload == SensorPayload(kind: .herald, bytes: Self.payload))
        #expect(earlier.count == 1 && earlier.first?.rssi == nil)  // the advert, RSSI 127
        guard case .disconnect(id, Self.centralLink)? = onlyWork(read) else {
            Issue.record("unexpected result")
            return
        }
        #expect(driver.sessionCount == 1)
        _ = feed(.result(id, .disconnect(.success(()))))
        #expect(driver.sessionCount == 1)  // the host's disconnection event ends it
        _ = feed(.host(.disconnected(Self.centralLink, reason: .remoteUserTerminated)))
        #expect(driver.sessionCount == 0)
        // Later adverts are measurements with the payload; no further connection.
        now = 5
        let later = advert(Self.androidAdvert)
        guard case .measure(_, nil, let known?, _, _)? = later.events.first else {
            Issue.record("expected a measure with the payload, got \(later.events)")
            return
        }
        #expect(known.bytes == Self.payload)
        #expect(feed(.tick).work.isEmpty)
    }

    @Test mutating func anAttemptRefusedForWantOfALinkIsNoFailure() throws {
        let id = try connectAndroid()
        #expect(feed(.result(id, .connect(.failure(.connectionFailed(.connectionLimitExceeded))))).work.isEmpty)
        #expect(driver.node.counters.connectionsRefused == 1 && driver.node.counters.connectionFailures == 0)
        now = 2
        guard case .connect(id, _, _, _)? = onlyWork(feed(.tick)) else {
            Issue.record("the refused target is not tried again at the next tick")
            return
        }
        // Any other failure is the target's: it is backed off.
        _ = feed(.result(id, .connect(.failure(.connectionFailed(.connectionFailedToBeEstablished)))))
        #expect(driver.node.counters.connectionFailures == 1)
        now = 3
        #expect(feed(.tick).work.isEmpty)
    }

    @Test mutating func aPhoneWithTheLegacyServiceIsReadThroughIt() throws {
        let id = try connectAndroid()
        _ = feed(.result(id, .connect(.success(Self.centralLink))))
        let work = onlyWork(feed(.result(id, .gatt(.discover(openTrace: false), .success(Self.discovered(HeraldUUIDs.legacyService, mtu: 23))))))
        #expect(step(work) == .readPayload(handle: 13))
    }

    @Test mutating func anAppleDeviceWithoutHeraldIsLeftForGoodButALostLinkIsNotProof() throws {
        _ = advert(Self.appleAdvert)
        now = 1
        guard case .connect(let id, _, _, _)? = onlyWork(feed(.tick)) else {
            Issue.record("unexpected result")
            return
        }
        _ = feed(.result(id, .connect(.success(Self.centralLink))))
        // The link dies during discovery: a failed session, retried after the backoff.
        let lost = feed(.result(id, .gatt(.discover(openTrace: false), .failure(.sessionEnded("reset")))))
        guard case .disconnect? = onlyWork(lost) else {
            Issue.record("unexpected result")
            return
        }
        _ = feed(.host(.disconnected(Self.centralLink, reason: .connectionTimeout)))
        #expect(driver.node.counters.notHerald == 0)
        now = 14  // after the 12 s backoff
        _ = advert(Self.appleAdvert)
        guard case .connect? = onlyWork(feed(.tick)) else {
            Issue.record("unexpected result")
            return
        }
        _ = feed(.result(id, .connect(.success(Self.centralLink))))
        // It answered that it has neither Herald service: not Herald.
        let none = feed(.result(id, .gatt(.discover(openTrace: false), .success(Self.discovered(nil, mtu: 185)))))
        guard case .disconnect? = onlyWork(none) else {
            Issue.record("unexpected result")
            return
        }
        _ = feed(.host(.disconnected(Self.centralLink, reason: .remoteUserTerminated)))
        #expect(driver.node.counters.notHerald == 1)
        now = 100
        #expect(advert(Self.appleAdvert).events.isEmpty)
        #expect(feed(.tick).work.isEmpty)
    }

    @Test mutating func signalWritesComeFromTheWriter() throws {
        let database = try VenueBeaconIdentity(beacon: BeaconPayload(country: 1, state: 2, code: 3, name: "x"), legacyService: false).database()
        let signal = try #require(database.characteristic(service: HeraldUUIDs.service, uuid: HeraldUUIDs.androidSignalCharacteristic))
        let phoneLink = HostLink(handle: 0x41, peerAddress: Self.phone, peerAddressType: .random, role: .peripheral)
        _ = feed(.host(.connected(phoneLink)))
        // As the host reports them: checked and decoded by the write gate on its thread.
        let gate = SignalWriteGate()
        func write(_ value: [UInt8]) -> GATTWrite {
            var write = GATTWrite(link: 0x41, characteristic: signal, value: value, withResponse: true, peerAddress: Self.phone, peerAddressType: .random)
            #expect(gate.validate(&write, now: .now) == nil)
            return write
        }
        let payloadWrite = try SignalWrite.payload(Self.payload).encoded()
        let first = feed(.host(.gattWrite(write(payloadWrite))))
        #expect(first.events.map(Self.name) == ["detect", "read", "measure"])
        guard case .detect(let target, _)? = first.events.first else { return }
        #expect(target.address == Self.phone && target.addressType == .random)
        now = 1
        let rssi = feed(.host(.gattWrite(write([0x02, 0xC4, 0xFF]))))
        guard case .measure(_, -60, let payload?, _, 1)? = rssi.events.first else {
            Issue.record("expected a measure at -60 dBm with the payload, got \(rssi.events)")
            return
        }
        #expect(payload.bytes == Self.payload)
        // A write the gate never saw is not decoded here a second time: counted, not taken.
        let unchecked = GATTWrite(
            link: 0x41, characteristic: signal, value: [0x02, 0xC4, 0xFF], withResponse: true, peerAddress: Self.phone, peerAddressType: .random)
        #expect(feed(.host(.gattWrite(unchecked))).events.isEmpty)
        #expect(driver.counters.undecodedWrites == 1)
        // A write without its writer (the host always names it) is counted, not guessed.
        _ = feed(.host(.disconnected(phoneLink, reason: .remoteUserTerminated)))
        #expect(feed(.host(.gattWrite(GATTWrite(link: 0x41, characteristic: signal, value: [0x02, 0xC4, 0xFF], withResponse: true)))).events.isEmpty)
        #expect(driver.counters.writesFromUnknownLinks == 1)
        // Writes the gate refused arrive as events: malformed ones (0x0D) are the node's rejected
        // writes, those that came too fast (0x11) are counted apart, neither is a sighting.
        func refused(_ value: [UInt8]) throws -> HostEvent {
            var write = GATTWrite(link: 0x41, characteristic: signal, value: value, withResponse: true, peerAddress: Self.phone, peerAddressType: .random)
            return .gattWriteRefused(write, try #require(gate.validate(&write, now: .now)))
        }
        for _ in 0..<3 { #expect(feed(.host(try refused([0x02, 0xC4]))).events.isEmpty) }
        #expect(feed(.host(.gattWriteRefused(write([0x02, 0xC4, 0xFF]), .insufficientResources))).events.isEmpty)
        #expect(driver.node.counters.signalWritesRejected == 3)
        #expect(driver.counters.rateLimitedWrites == 1)
        // A refusal for another characteristic is none of the node's business.
        let payloadCharacteristic = try #require(database.characteristic(service: HeraldUUIDs.service, uuid: HeraldUUIDs.payloadCharacteristic))
        _ = feed(.host(.gattWriteRefused(GATTWrite(link: 0x41, characteristic: payloadCharacteristic, value: [1], withResponse: true), .writeNotPermitted)))
        #expect(driver.node.counters.signalWritesRejected == 3)
    }

    /// The attempt's one deadline is the host's: the node keeps no timer of its own, so a link
    /// that comes up late is used, and the host's timeout backs the phone off like any failure.
    @Test mutating func theHostsDeadlineEndsAnAttemptAndABorrowedLinkIsKept() throws {
        let id = try connectAndroid()
        now = 14  // past the 12 s attempt timeout: the node leaves it to the host
        #expect(feed(.tick).work.isEmpty)
        let late = feed(.result(id, .connect(.success(Self.centralLink))))
        guard case .gatt(id, .discover(openTrace: false), Self.centralLink)? = onlyWork(late) else {
            Issue.record("unexpected result \(late.work)")
            return
        }
        _ = feed(.host(.disconnected(Self.centralLink, reason: .remoteUserTerminated)))
        #expect(driver.sessionCount == 0)

        // The host's timeout is the node's connection timeout: counted, the phone backed off.
        var timedOut = try NodeDriverTests()
        let timedOutID = try timedOut.connectAndroid()
        timedOut.now = 13
        _ = timedOut.feed(.result(timedOutID, .connect(.failure(.connectionFailed(.connectionTimeout)))))
        #expect(timedOut.driver.node.counters.connectionTimeouts == 1 && timedOut.driver.sessionCount == 0)
        timedOut.now = 14
        #expect(timedOut.feed(.tick).work.isEmpty)

        // The phone had connected to us already: the host lends us its link; we leave it up.
        var other = try NodeDriverTests()
        let otherID = try other.connectAndroid()
        let borrowed = HostLink(handle: 0x42, peerAddress: Self.phone, peerAddressType: .random, role: .peripheral)
        _ = other.feed(.result(otherID, .connect(.success(borrowed))))
        _ = other.feed(.result(otherID, .gatt(.discover(openTrace: false), .success(Self.discovered(mtu: 23)))))
        let read = other.feed(.result(otherID, .gatt(.readPayload(handle: 13), .success(.value(Self.payload)))))
        #expect(read.work.isEmpty)
        #expect(other.driver.sessionCount == 0)
        #expect(other.driver.node.counters.connectionFailures == 0)
    }

    @Test mutating func hostStatesBecomeRadioConditionsAndReadyOnce() {
        #expect(feed(.host(.state(.opening("hci0")))).notes.isEmpty)  // already starting
        _ = feed(.host(.state(.ready)))
        let up = feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        #expect(up.notes == [.radio(.running), .ready])
        #expect(up.events.map(Self.name) == ["bluetoothState"])
        // Whether the controller scans while it connects goes to the node (no scanning gap
        // between attempts then); the condition stays.
        #expect(!driver.node.controllerScansWhileConnecting)
        #expect(feed(.host(.radio(RadioState(advertising: true, scanning: true, scansWhileConnecting: true)))).notes.isEmpty)
        #expect(driver.node.controllerScansWhileConnecting)
        _ = feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        #expect(!driver.node.controllerScansWhileConnecting)
        #expect(feed(.host(.radio(RadioState(advertising: false, scanning: true)))).notes == [.radio(.partial(advertising: false, scanning: true))])
        #expect(feed(.host(.radio(RadioState(advertising: true, scanning: true)))).notes == [.radio(.running)])
        let lost = feed(.host(.state(.recovering("transport closed"))))
        #expect(lost.notes == [.radio(.unavailable("transport closed"))])
        #expect(lost.events.map(Self.name) == ["bluetoothState"])
        // Reopening attempts stay "unavailable" (no flapping to "starting" and back).
        #expect(feed(.host(.state(.opening("hci0")))).notes.isEmpty)
        #expect(feed(.host(.state(.unavailable("transport closed")))).notes.isEmpty)
        #expect(feed(.host(.state(.unavailable("no adapter")))).notes == [.radio(.unavailable("no adapter"))])
        #expect(feed(.host(.radio(RadioState(advertising: true, scanning: true)))).notes == [.radio(.running)])  // no second ready
    }

    @Test mutating func aControllerFailureEndsEverySession() throws {
        let id = try connectAndroid()
        _ = feed(.result(id, .connect(.success(Self.centralLink))))
        #expect(driver.sessionCount == 1)
        _ = feed(.host(.state(.recovering("hardware error"))))
        #expect(driver.sessionCount == 0)
        // Results of requests from the old session are ignored.
        #expect(feed(.result(id, .gatt(.discover(openTrace: false), .failure(.sessionEnded("hardware error"))))).work.isEmpty)
    }

    /// The node ticks on while the controller is away and may start a connection; the failed
    /// reopen that follows drops it from the node too, which connects again once the radio runs
    /// (found by the simulated controller loss: before, the node kept that session for good and
    /// never connected again).
    @Test mutating func aConnectionStartedWhileTheControllerIsAwayEndsWithTheNextFailedReopen() throws {
        _ = feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        _ = feed(.host(.state(.recovering("transport closed"))))
        let id = try connectAndroid()
        #expect(driver.sessionCount == 1)
        _ = feed(.host(.state(.opening("hci0"))))
        _ = feed(.host(.state(.unavailable("no adapter"))))
        #expect(driver.sessionCount == 0)
        // The old session's reply is ignored; once running, the node connects again.
        #expect(feed(.result(id, .connect(.failure(.sessionEnded("no adapter"))))).work.isEmpty)
        _ = feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        now = 40
        _ = advert(Self.androidAdvert)
        guard case .connect(let again, _, _, _)? = onlyWork(feed(.tick)) else {
            Issue.record("no connection attempt after the controller came back")
            return
        }
        #expect(again == id)
    }

    @Test mutating func aQuietHostIsProbedAndAStalledOneStopsBeingResponsive() {
        // No controller yet: opening or retrying is not a stall.
        now = 100
        #expect(driver.hostResponsive(now: now))
        _ = feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        now = 104
        #expect(feed(.tick).work.isEmpty)
        now = 105
        let probe = feed(.tick)
        guard case .probe? = onlyWork(probe) else {
            Issue.record("expected a probe, got \(probe.work)")
            return
        }
        now = 110
        #expect(feed(.tick).work.isEmpty)  // one probe at a time
        #expect(driver.hostResponsive(now: 120))
        #expect(!driver.hostResponsive(now: 121))  // 21 s without a sign of life
        now = 121
        _ = feed(.probeAnswered)
        #expect(driver.hostResponsive(now: 121))
        // Events are signs of life too; a lost controller is not a stall.
        now = 200
        _ = feed(.host(.advertisingReport(LEAdvertisingReport(
            eventType: .nonConnectableUndirected, addressType: .random, address: Self.phone, data: [0x02, 0x01, 0x06], rawRSSI: -70))))
        #expect(driver.hostResponsive(now: 215))
        _ = feed(.host(.state(.recovering("transport closed"))))
        #expect(driver.hostResponsive(now: 1000))
    }

    static func name(_ event: SensorEvent) -> String {
        switch event {
        case .detect: return "detect"
        case .measure: return "measure"
        case .read: return "read"
        case .share: return "share"
        case .delete: return "delete"
        case .bluetoothState: return "bluetoothState"
        }
    }
}
