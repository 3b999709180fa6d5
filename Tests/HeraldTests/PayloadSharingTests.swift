import BLEHost
import Testing

@testable import Herald

/// Payload sharing: the node writes the payloads of other iPhones it saw recently to each iPhone
/// it connects to (signal write `0x03`).
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
        let target = try #require(h.node.table[a.id])
        #expect(h.node.sharingData(for: target, now: 302) == nil)
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
        let target = try #require(h.node.table[a.id])
        #expect(h.node.sharingData(for: target, now: 4) == phone2)
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
