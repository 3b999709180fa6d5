import BLEHost
import Herald
import Testing

@testable import Simulation

/// The host's own link manager (init sequence, advertising, scanning, connecting) against the
/// node's virtual controller: the air must be a controller the unchanged host works with. The
/// loop here only carries packets and time, as a runtime would; all decisions are the link
/// manager's. It tests the air as much as the link manager, and needs the simulated air, so it
/// lives here: `BLEHostTests` tests `BLEHost` alone, and `Simulation` is built on top of it.
/// `LinkManager`'s own tests are in `BLEHostTests` (`LinkManagerTests`, `LinkManagerCapTests`).
@Suite struct LinkManagerOnAirTests {
    struct Harness {
        var air: Air
        var manager = LinkManager()
        var actions: [LinkManager.Action] = []
        var ready: ControllerInfo?
        var reports: [(time: Double, report: LEAdvertisingReport)] = []
        var opened: [LELink] = []
        var closed: [(LELink, HCIStatus)] = []
        var failed: [HCIStatus] = []
        var resets = 0

        init(_ air: Air) { self.air = air }

        var now: ContinuousClock.Instant { air.instant(air.now) }

        mutating func perform() {
            while !actions.isEmpty {
                let batch = actions
                actions.removeAll()
                for action in batch {
                    switch action {
                    case .send(let bytes): air.send(H4Packet(type: .command, body: Array(bytes.dropFirst())))
                    case .ready(let info): ready = info
                    case .advertisingReports(let r): for report in r { reports.append((air.now, report)) }
                    case .connectionOpened(let link): opened.append(link)
                    case .connectionClosed(let link, let reason): closed.append((link, reason))
                    case .connectionFailed(_, _, let status): failed.append(status)
                    case .resetController: resets += 1
                    default: break
                    }
                }
            }
        }

        /// Runs to virtual time `end`, feeding every event to the link manager and ticking it at
        /// its deadlines (in virtual time).
        mutating func run(until end: Double) {
            perform()
            while air.now < end {
                var limit = end
                if let deadline = manager.nextDeadline {
                    limit = min(limit, max(air.now, Air.seconds(from: air.instant(0), to: deadline)))
                }
                let packets = air.advance(until: limit)
                for packet in packets where packet.type == .event {
                    if let event = try? HCIEvent(decoding: packet.body[...]) { manager.handle(event, now: now, into: &actions) }
                }
                if let deadline = manager.nextDeadline, deadline <= now { manager.tick(now: now, into: &actions) }
                perform()
                if packets.isEmpty, limit == air.now, manager.nextDeadline.map({ $0 > now }) ?? true, air.now >= end { break }
            }
        }
    }

    @Test func theLinkManagerInitialisesAdvertisesScansAndConnects() throws {
        let phone = AirTests.phone(0, .heraldAndroid, from: 0, to: 600)
        var h = Harness(Air(truth: AirTests.truth([phone]), configuration: AirTests.noFailures))
        h.manager.start(now: h.now, into: &h.actions)
        var advert = AdvertisingDataBuilder()
        advert.appendFlags(.generalDiscoverableLEOnly)
        advert.appendServiceUUIDs([HeraldUUIDs.service])
        h.manager.setAdvertising(
            AdvertisingConfiguration(parameters: LESetAdvertisingParameters(), data: try advert.build(), scanResponse: .empty),
            now: h.now, into: &h.actions)
        h.manager.setScanning(LESetScanParameters(), now: h.now, into: &h.actions)
        h.run(until: 10)

        let info = try #require(h.ready)
        #expect(info.address == AirConfiguration().nodeAddress)
        #expect(info.aclDataLength == 27 && info.aclPacketCount == 4)
        #expect(h.air.controller.advertisingEnabled && h.air.controller.scanning)
        #expect(h.reports.count > 25)
        #expect(h.air.counters.commandsRefused == 0)

        // Connect to the address it just heard; scanning stops for it and comes back after.
        let last = try #require(h.reports.last?.report)
        h.manager.connect(to: last.address, addressType: last.addressType, now: h.now, into: &h.actions)
        h.run(until: 15)
        let link = try #require(h.opened.first)
        #expect(link.role == .central && link.peerAddress == last.address)
        #expect(h.air.controller.scanning)
        h.manager.disconnect(handle: link.handle, now: h.now, into: &h.actions)
        h.run(until: 20)
        #expect(h.closed.map(\.1) == [.localHostTerminated])
        #expect(h.resets == 0)
        #expect(h.air.counters.commandsRefused == 0)
    }

    @Test func aConnectionToAPhoneThatLeftTimesOutAndIsCancelled() throws {
        let phone = AirTests.phone(0, .heraldAndroid, from: 0, to: 5, rotation: 2)
        var h = Harness(Air(truth: AirTests.truth([phone]), configuration: AirTests.noFailures))
        h.manager.start(now: h.now, into: &h.actions)
        h.manager.setScanning(LESetScanParameters(), now: h.now, into: &h.actions)
        h.run(until: 6)
        let last = try #require(h.reports.last?.report)
        h.manager.connect(to: last.address, addressType: last.addressType, now: h.now, into: &h.actions)
        h.run(until: 30)
        // The link manager gave up at the attempt's deadline (12 s by default) and cancelled;
        // the controller's 0x02 is reported as the timeout it is.
        #expect(h.failed == [.connectionTimeout])
        #expect(h.air.counters.connectionsCancelled == 1)
        #expect(h.air.controller.initiating == nil && h.air.controller.scanning)
        #expect(h.resets == 0)
    }

    @Test func legacyAdvertisingComesBackAfterAPhoneConnectsToTheNode() throws {
        let writer = AirTests.phone(0, .heraldAndroidWriter, from: 0, to: 60)
        var h = Harness(Air(truth: AirTests.truth([writer]), configuration: AirTests.noFailures))
        h.manager.start(now: h.now, into: &h.actions)
        var advert = AdvertisingDataBuilder()
        advert.appendServiceUUIDs([HeraldUUIDs.service])
        h.manager.setAdvertising(
            AdvertisingConfiguration(parameters: LESetAdvertisingParameters(), data: try advert.build(), scanResponse: .empty),
            now: h.now, into: &h.actions)
        h.run(until: 30)
        // The phone connected (as central) at least once; nobody answered its ATT request in
        // this test, so its link ends when ATT gives up or the phone leaves. Advertising was
        // re-enabled by the link manager after the link opened.
        #expect(h.opened.contains { $0.role == .peripheral })
        #expect(h.air.controller.advertisingEnabled)
        #expect(h.air.counters.commandsRefused == 0)
    }
}
