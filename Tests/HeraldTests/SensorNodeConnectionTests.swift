import BLEHost
import Testing

@testable import Herald

/// Connection attempts and sessions: quota, timeouts, back-off, and forgetting targets.
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
        #expect(h.node.attemptTimeout(of: target.id) == 12)  // the host's deadline for it
        _ = h.advert(1, androidAdvert, at: 11)
        #expect(h.tick(12.5).isEmpty)  // the node keeps no timer of its own
        #expect(h.link(.connectTimedOut, target.id, at: 12).isEmpty)
        #expect(h.node.counters.connectionTimeouts == 1)
        // A late report for the ended attempt is ignored.
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
