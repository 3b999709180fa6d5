import Foundation
import GRDB
import Sightings
import Testing
@testable import VenueDiary

/// The live owner: tracker + batched writer on a real diary file, driven by a manual clock.
@Suite struct VenueDiaryTests {
    let dir: TemporaryDirectory
    let path: String
    init() throws {
        dir = try TemporaryDirectory()
        path = dir.path("diary.sqlite")
    }

    let t0 = 1_795_197_600.0  // 2026-11-20T18:00:00Z

    /// Runs the clock once a second from `from` to `to`, sighting each phone whose presence
    /// range contains the second, every `every` seconds.
    func run(_ diary: inout VenueDiary, keys: [VisitKey], present: [ClosedRange<Double>], from: Double, to: Double, every: Double = 5) throws -> [VisitChange] {
        var changes: [VisitChange] = []
        var now = from
        while now <= to {
            for (key, range) in zip(keys, present) where range.contains(now) && (now - range.lowerBound).truncatingRemainder(dividingBy: every) == 0 {
                diary.record(key, time: now, rssi: -60)
            }
            changes += try diary.tick(now: now)
            now += 1
        }
        return changes
    }

    @Test func theLivePolicyCommitsCheckInsWithinTwoMinutesAndProgressEveryTen() throws {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        var sightings = 0
        var now = t0
        while now <= t0 + 1800 {
            diary.record(key, time: now, rssi: -60)
            sightings += 1
            try diary.tick(now: now)
            let stored = try store.visits()
            if now - t0 >= 122 + 120 {
                // Checked in at t0 + 122: on disk within 2 minutes, never more than 10 behind.
                #expect(stored.count == 1)
                if let visit = stored.first { #expect(now - visit.lastSeen <= 600) }
            } else if now - t0 < 122 {
                #expect(stored.isEmpty)
            }
            now += 2
        }
        // The check-in, then the progress at t0 + 600, + 1200 and + 1800.
        #expect(diary.committedBatches == 4)
        #expect(sightings > 200 * diary.committedBatches)
        let stored = try #require(try store.visits().first)
        #expect(stored.checkIn == t0 && stored.checkOut == nil && stored.lastSeen == t0 + 1800)
    }

    @Test func aCheckInIsCommittedAloneWhileOpenVisitsWaitForTheInterval() throws {
        let store = try DiaryStore(path: path)
        let policy = FlushPolicy(interval: 30, maxPendingChanges: 10_000, checkInsWithin: 0)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0, policy: policy)
        let early = diary.key(for: .herald, payload: heraldPayload(1))
        let late = diary.key(for: .herald, payload: heraldPayload(2))
        // early checks in at t0 + 125 (a flush), late at t0 + 145: between interval flushes.
        _ = try run(&diary, keys: [early, late], present: [t0...t0 + 600, t0 + 20...t0 + 600], from: t0, to: t0 + 146)
        let stored = Dictionary(uniqueKeysWithValues: try store.visits().map { ($0.payload, $0) })
        #expect(stored[heraldPayload(2)]?.lastSeen == t0 + 145)
        // early's row still holds what the t0 + 125 commit wrote, though it was seen since.
        #expect(stored[heraldPayload(1)]?.lastSeen == t0 + 125)
        #expect(diary.committedBatches == 2)
        _ = try run(&diary, keys: [early, late], present: [t0...t0 + 600, t0 + 20...t0 + 600], from: t0 + 147, to: t0 + 155)
        // The interval flush at t0 + 150 (30 s after t0 + 120) refreshes both.
        #expect(try store.visits().map(\.lastSeen) == [t0 + 150, t0 + 150])
        #expect(diary.committedBatches == 3)
    }

    @Test func aWalkPastIsNeverWritten() throws {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        let changes = try run(&diary, keys: [key], present: [t0...t0 + 60], from: t0, to: t0 + 600)
        #expect(changes.map(\.event) == [.walkPast])
        try diary.close(now: t0 + 600, checkingOutOpenVisits: true)
        #expect(try store.stats().visits == 0)
    }

    @Test func aVisitSpanningMidnightIsOneVisit() throws {
        let store = try DiaryStore(path: path)
        let evening = 1_795_218_930.0  // 2026-11-20T23:55:30Z
        var diary = try VenueDiary(store: store, settings: settings(), now: evening)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        _ = try run(&diary, keys: [key], present: [evening...evening + 875], from: evening, to: evening + 1300)
        try diary.close(now: evening + 1300)
        let visits = try store.visits()
        #expect(visits.count == 1)
        #expect(visits.first?.checkIn == evening && visits.first?.checkOut == evening + 875)
        // Both days' windows contain it.
        #expect(try store.visits(in: VisitWindow(from: evening - 86_400, to: evening)).count == 1)
        #expect(try store.visits(in: VisitWindow(from: evening + 870, to: evening + 86_400)).count == 1)
    }

    @Test func aRestartResumesAVisitStillPresentInsteadOfSplittingIt() throws {
        do {
            var diary = try VenueDiary(store: try DiaryStore(path: path), settings: settings(), now: t0)
            let key = diary.key(for: .herald, payload: heraldPayload(1))
            _ = try run(&diary, keys: [key], present: [t0...t0 + 600], from: t0, to: t0 + 600)
            // No close(): the process dies here; only what the ticks committed survives.
        }
        let store = try DiaryStore(path: path)
        let beforeRestart = try #require(try store.openVisits().first)
        #expect(beforeRestart.lastSeen >= t0 + 570)

        var diary = try VenueDiary(store: store, settings: settings(), now: t0 + 700)
        #expect(diary.resumedVisits == 1 && diary.closedStaleVisits == 0)
        let again = diary.key(for: .herald, payload: heraldPayload(1))
        let changes = try run(&diary, keys: [again], present: [t0 + 700...t0 + 900], from: t0 + 700, to: t0 + 1300)
        #expect(changes.map(\.event) == [.checkedOut])
        let visits = try store.visits()
        #expect(visits.count == 1)
        #expect(visits.first?.id == beforeRestart.id)
        #expect(visits.first?.checkIn == t0 && visits.first?.checkOut == t0 + 900)
    }

    /// A last sighting on disk may be a commit interval old (a power cut loses what came since),
    /// so a restart resumes a visit unseen for up to the check-out limit plus that interval;
    /// one unseen for longer is closed at its last sighting.
    @Test func aRestartClosesAVisitUnseenForLongerThanTheCheckOutLimitAndACommitIntervalAtItsLastSighting() throws {
        do {
            var diary = try VenueDiary(store: try DiaryStore(path: path), settings: settings(), now: t0)
            let key = diary.key(for: .herald, payload: heraldPayload(1))
            _ = try run(&diary, keys: [key], present: [t0...t0 + 600], from: t0, to: t0 + 600)
            try diary.flush(now: t0 + 600)
        }
        let store = try DiaryStore(path: path)
        let limit = 300 + FlushPolicy.live.interval
        // Exactly the limit after the last sighting: still resumed.
        do {
            let diary = try VenueDiary(store: store, settings: settings(), now: t0 + 600 + limit)
            #expect(diary.resumedVisits == 1)
        }
        var diary = try VenueDiary(store: store, settings: settings(), now: t0 + 601 + limit)
        #expect(diary.resumedVisits == 0 && diary.closedStaleVisits == 1)
        let visit = try #require(try store.visits().first)
        #expect(visit.checkOut == t0 + 600 && visit.lastSeen == t0 + 600)
        // The phone coming back now opens a new visit.
        let back = t0 + 601 + limit
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        _ = try run(&diary, keys: [key], present: [back...back + 200], from: back, to: back + 200)
        try diary.flush(now: back + 200)
        let checkIns = try store.visits().map(\.checkIn)
        #expect(checkIns == [t0, back])
    }

    /// Resumed, a visit seen again within the check-out limit of the restart goes on (the time
    /// the node was off is not absence); unseen, it is closed at its last sighting on disk.
    @Test func aResumedVisitUnseenAfterTheRestartIsClosedAtItsLastSighting() throws {
        do {
            var diary = try VenueDiary(store: try DiaryStore(path: path), settings: settings(), now: t0)
            let key = diary.key(for: .herald, payload: heraldPayload(1))
            _ = try run(&diary, keys: [key], present: [t0...t0 + 600], from: t0, to: t0 + 600)
            try diary.flush(now: t0 + 600)
        }
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0 + 1200)
        #expect(diary.resumedVisits == 1)
        let changes = try run(&diary, keys: [], present: [], from: t0 + 1200, to: t0 + 1600)
        #expect(changes.map(\.event) == [.checkedOut])
        try diary.flush(now: t0 + 1600)
        let visit = try #require(try store.visits().first)
        #expect(visit.checkOut == t0 + 600)
    }

    @Test func shutdownLeavesPresentVisitsOpenUnlessAskedToCheckThemOut() throws {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        _ = try run(&diary, keys: [key], present: [t0...t0 + 300], from: t0, to: t0 + 310)
        try diary.close(now: t0 + 310)
        let open = try #require(try store.visits().first)
        #expect(open.checkOut == nil && open.lastSeen == t0 + 300)
        let changes = try diary.close(now: t0 + 310, checkingOutOpenVisits: true)
        #expect(changes.map(\.event) == [.checkedOut])
        #expect(try store.visits().first?.checkOut == t0 + 300)
    }

    @Test func recordingDaysZeroWritesNothingAndPurgesEverything() throws {
        let store = try DiaryStore(path: path)
        try store.save([Visit(kind: .gaen, payload: [1, 2, 3], checkIn: t0 - 5000, lastSeen: t0 - 4000, checkOut: t0 - 4000, samples: 9, rssiMax: -70, rssiSum: -700)])
        var diary = try VenueDiary(store: store, settings: settings(recordingDays: 0), now: t0)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        let changes = try run(&diary, keys: [key], present: [t0...t0 + 600], from: t0, to: t0 + 1000)
        #expect(changes.map(\.event) == [.checkedIn, .checkedOut])
        try diary.close(now: t0 + 1000, checkingOutOpenVisits: true)
        #expect(diary.committedBatches == 0)
        #expect(try diary.purge(now: t0 + 1000) == 1)
        #expect(try store.stats().visits == 0)
    }

    @Test func lateAttributionMovesTheStoredCheckInEarlier() throws {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        _ = try run(&diary, keys: [key], present: [t0 + 200...t0 + 500], from: t0 + 200, to: t0 + 500)
        #expect(try store.visits().first?.checkIn == t0 + 200)
        // The radio measured this phone by address from t0 on, before it read the payload.
        diary.attribute(stride(from: t0, to: t0 + 200, by: 10).map { RSSISample(time: $0, rssi: -40) }, to: key)
        try diary.flush(now: t0 + 500)
        let visit = try #require(try store.visits().first)
        #expect(try store.visits().count == 1)
        #expect(visit.checkIn == t0 && visit.rssiMax == -40 && visit.samples == 61 + 20)
    }

    @Test func manyVisitsInSmallBatchesAreAllWrittenWhole() throws {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0, policy: FlushPolicy(interval: 30, maxPendingChanges: 5, checkInsWithin: 30))
        let keys = (0..<40).map { diary.key(for: .herald, payload: heraldPayload(UInt32($0))) }
        let present = (0..<40).map { i in (t0 + Double(i * 10))...(t0 + Double(i * 10) + 400) }
        _ = try run(&diary, keys: keys, present: present, from: t0, to: t0 + 1200)
        try diary.close(now: t0 + 1200)
        let visits = try store.visits()
        #expect(visits.count == 40)
        #expect(visits.allSatisfy { $0.checkOut != nil && $0.checkOut! - $0.checkIn == 400 })
    }
}
