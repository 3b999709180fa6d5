import Sightings
import Testing
@testable import VenueDiary

/// One identity on two devices at once is marked, never silently merged; one device whose
/// address rotates is not (issue: placeholder and cloned identifiers).
@Suite struct SharedIdentityTests {
    var tracker = PresenceTracker(settings: settings(checkIn: 120, checkOut: 300))
    let phone = heraldPayload(7)

    /// Sightings every `step` seconds from `from` through `to`, the device taken in turn from `carriers`.
    mutating func sight(_ key: VisitKey, from: Double, to: Double, step: Double = 5, carriers: [UInt32]) {
        var n = 0
        for time in stride(from: from, through: to, by: step) {
            let recorded = tracker.record(key, time: time, rssi: -60, carrier: carriers[n % carriers.count])
            #expect(recorded)
            n += 1
        }
    }

    @Test mutating func twoDevicesTakingTurnsMarkTheVisitShared() throws {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, from: 0, to: 200, carriers: [11, 22])
        tracker.advance(to: 600)
        let changes = tracker.takeChanges(includingUpdates: true)
        #expect(changes.map(\.event) == [.checkedIn, .checkedOut])
        let visit = try #require(changes.last?.visit)
        #expect(visit.sharedIdentity)
        #expect(visit.samples == 41)  // marked, not split or dropped
        #expect(tracker.counters.sharedIdentities == 1)
    }

    @Test mutating func threeDevicesInRotationAreFoundToo() throws {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, from: 0, to: 200, carriers: [11, 22, 33])
        #expect(try #require(tracker.openVisit(key)).sharedIdentity)
    }

    /// A phone's address rotates every ~15 minutes: a new device each time, never back.
    @Test mutating func oneDeviceWhoseAddressRotatesIsNotShared() throws {
        let key = tracker.key(for: .herald, payload: phone)
        for (index, start) in stride(from: 0.0, through: 3600, by: 900).enumerated() {
            sight(key, from: start, to: start + 895, carriers: [UInt32(100 + index)])
        }
        // One late advert from the address just left (one return) is not enough either.
        _ = tracker.record(key, time: 4496, rssi: -60, carrier: 103)
        _ = tracker.record(key, time: 4497, rssi: -60, carrier: 104)
        let visit = try #require(tracker.openVisit(key))
        #expect(!visit.sharedIdentity)
        #expect(tracker.counters.sharedIdentities == 0)
    }

    /// A device heard again only after `sharedWindow` is a return that does not count.
    @Test mutating func returnsAfterTheWindowDoNotCount() throws {
        let key = tracker.key(for: .herald, payload: phone)
        var time = 0.0
        for carrier: UInt32 in [11, 22, 11, 22, 11] {
            sight(key, from: time, to: time + 10, step: 5, carriers: [carrier])
            time += 10 + PresenceTracker.sharedWindow + 5
        }
        #expect(try !#require(tracker.openVisit(key)).sharedIdentity)
    }

    /// The mark belongs to one visit: the identity's next visit starts unmarked.
    @Test mutating func theNextVisitStartsUnmarked() throws {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, from: 0, to: 200, carriers: [11, 22])
        tracker.advance(to: 600)
        _ = tracker.takeChanges(includingUpdates: false)
        sight(key, from: 1000, to: 1200, carriers: [33])
        #expect(try !#require(tracker.openVisit(key)).sharedIdentity)
    }

    /// Sightings without a device (a replayed file) never mark a visit.
    @Test mutating func sightingsWithoutADeviceAreNeverMarked() throws {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, from: 0, to: 200, carriers: [0])
        #expect(try !#require(tracker.openVisit(key)).sharedIdentity)
    }

    /// The diary keeps the mark: written with the open visit, kept at check-out, read back.
    @Test func theDiaryKeepsTheMark() throws {
        let directory = try TemporaryDirectory()
        let store = try DiaryStore(path: directory.path("diary.sqlite"))
        let everyTick = FlushPolicy(interval: 0, maxPendingChanges: 10_000, checkInsWithin: 0)
        var diary = try VenueDiary(store: store, settings: settings(), now: 0, policy: everyTick)
        let shared = diary.key(for: .herald, payload: heraldPayload(1))
        let single = diary.key(for: .herald, payload: heraldPayload(2))
        for (n, time) in stride(from: 0.0, through: 200, by: 5).enumerated() {
            diary.record(shared, time: time, rssi: -60, carrier: n % 2 == 0 ? 11 : 22)
            diary.record(single, time: time, rssi: -60, carrier: 33)
        }
        _ = try diary.tick(now: 201)
        let open = try store.visits()
        #expect(open.count == 2)
        #expect(open.first { $0.payload == heraldPayload(1) }?.sharedIdentity == true)
        #expect(open.first { $0.payload == heraldPayload(2) }?.sharedIdentity == false)
        #expect(open.allSatisfy { $0.checkOut == nil })
        _ = try diary.tick(now: 600)
        let closed = try store.visits()
        #expect(closed.allSatisfy { $0.checkOut != nil })
        #expect(closed.first { $0.payload == heraldPayload(1) }?.sharedIdentity == true)
        #expect(closed.first { $0.payload == heraldPayload(2) }?.sharedIdentity == false)
    }
}
