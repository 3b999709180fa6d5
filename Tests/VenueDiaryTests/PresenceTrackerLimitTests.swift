import Testing

@testable import VenueDiary

/// A flood of identifiers (random GAEN adverts, say) cannot grow the tracker without bound.
@Suite struct PresenceTrackerLimitTests {
    @Test func aFullTrackerMakesRoomFromIdleKeysThenPendingVisitsNeverCheckedInOnes() {
        // Room comes an eighth of the limit at a time: one identity at a time with a limit of 8.
        var tracker = PresenceTracker(settings: settings(), maximumIdentities: 8)
        func payload(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 16) }
        func sight(_ n: UInt8, _ times: [Double]) -> VisitKey {
            let key = tracker.key(for: .gaen, payload: payload(n))
            for time in times {
                let recorded = tracker.record(key, time: time, rssi: -60)
                #expect(recorded)
            }
            return key
        }
        // Two checked-in visits, three that walked past (idle at 400, 401, 402), three pending
        // (one of them seen twice).
        let present = [sight(1, [0, 200]), sight(2, [0, 200])]
        let walked = [sight(3, [10]), sight(4, [11]), sight(5, [12])]
        tracker.advance(to: 400)  // 3 ends (400 − 10 > 300)
        tracker.advance(to: 401)  // 4
        tracker.advance(to: 402)  // 5
        let pending = [sight(6, [395, 399]), sight(7, [396]), sight(8, [397])]
        _ = tracker.takeChanges(includingUpdates: false)
        #expect(tracker.trackedIdentities == 8)

        // Three new identities take the idle keys' room, longest idle first.
        _ = sight(9, [403])
        let released = tracker.record(walked[0], time: 403, rssi: -60)
        #expect(!released)
        _ = sight(10, [403.5])
        let newest = sight(11, [403.7])
        #expect(tracker.trackedIdentities == 8 && tracker.counters.identitiesEvicted == 3)
        #expect(tracker.takeChanges(includingUpdates: false).isEmpty)

        // Then pending visits end as walk-pasts: the least seen first and, of those, the newest
        // (an identity just admitted is worth less than one seen for a while).
        _ = sight(12, [404])
        let ended = tracker.takeChanges(includingUpdates: false)
        #expect(ended.map(\.event) == [.walkPast] && ended.first?.key == newest)
        #expect(tracker.openVisit(newest) == nil && pending.allSatisfy { tracker.openVisit($0) != nil })
        #expect(tracker.counters.pendingVisitsEnded == 1)
        // The one seen twice outlasts every pending visit seen once.
        _ = sight(13, [404.5])
        _ = sight(14, [404.6])
        #expect(tracker.openVisit(pending[0]) != nil && tracker.counters.pendingVisitsEnded == 3)

        // Checked-in visits are never dropped: with only those and newer pending visits left,
        // the pending ones go, and the checked-in ones stay open.
        for n in UInt8(15)...40 { _ = sight(n, [405]) }
        #expect(present.allSatisfy { tracker.isCheckedIn($0) })
        #expect(tracker.trackedIdentities <= 8)
        // A phone whose key went is registered again at its next sighting.
        let again = tracker.key(for: .gaen, payload: payload(3))
        let recordedAgain = tracker.record(again, time: 406, rssi: -60)
        #expect(recordedAgain)
    }

    @Test func onlyCheckedInVisitsMayExceedTheLimit() {
        var tracker = PresenceTracker(settings: settings(), maximumIdentities: 8)
        for n in UInt8(1)...12 {
            let key = tracker.key(for: .herald, payload: heraldPayload(UInt32(n)))
            for time in [0.0, 200] {
                let recorded = tracker.record(key, time: time, rssi: -60)
                #expect(recorded)
            }
            #expect(tracker.isCheckedIn(key))
        }
        #expect(tracker.trackedIdentities == 12 && tracker.openVisitCount == 12 && tracker.counters.identitiesEvicted == 0)
    }
}
