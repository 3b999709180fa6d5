import BLEHost
import Sightings
import Testing

@testable import Herald

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
        let first = try #require(h.node.target(ids[0]))
        #expect(connected.first == .discover(first, openTrace: false))
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
        #expect(h.link(.payloadRead(phone1), a.id, at: 0.3) == [.event(.read(a, payload: SensorPayload(kind: .herald, bytes: phone1), earlier: [RSSISample(time: 0, rssi: -60)], time: 0.3)), .disconnect(a)])
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
