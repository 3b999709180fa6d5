import BLEHost
import Testing

@testable import Herald

/// Adverts detect targets (Herald, GAEN, Apple, OpenTrace); reads turn them into payloads and
/// measurements.
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
        #expect(first.reads.map(\.0.metadataBytes) == [aem])
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
