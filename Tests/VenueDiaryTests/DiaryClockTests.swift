import Foundation
import GRDB
import Testing
@testable import VenueDiary

/// Visits recorded before the system clock was synchronised: marked, corrected at sync in the
/// same boot, left marked (and exported as such) from a boot that never synchronised.
@Suite struct DiaryClockTests {
    let dir: TemporaryDirectory
    let path: String
    init() throws {
        dir = try TemporaryDirectory()
        path = dir.path("diary.sqlite")
    }

    /// The Pi booted with its clock restored two hours behind: wall − boot time is 1,000 s until
    /// sync, 8,200 s after.
    let fake = 1_795_190_400.0  // what the unsynchronised clock says at the start
    let step = 7_200.0
    let before = DiaryClock.unsynchronised(bootID: "boot-1", wallMinusBoot: 1_000)

    func sighting(_ diary: inout VenueDiary, _ key: VisitKey, _ times: StrideThrough<Double>) throws {
        for t in times {
            diary.record(key, time: t, rssi: -60)
            try diary.tick(now: t)
        }
    }

    @Test func syncCorrectsVisitsRecordedBeforeItAndOpenVisitsGoOn() throws {
        let store = try DiaryStore(path: path)
        // A visit from an earlier boot that never synchronised.
        let old = Visit(kind: .herald, payload: heraldPayload(9), checkIn: fake - 86_400, lastSeen: fake - 86_000, checkOut: fake - 86_000, samples: 4, rssiMax: -50, rssiSum: -220)
        try store.save([old], clock: .unsynchronised(bootID: "boot-0", wallMinusBoot: 5))

        var diary = try VenueDiary(store: store, settings: settings(), now: fake, clock: before)
        let left = diary.key(for: .herald, payload: heraldPayload(1))
        let stays = diary.key(for: .herald, payload: heraldPayload(2))
        try sighting(&diary, left, stride(from: fake, through: fake + 300, by: 10))
        try sighting(&diary, stays, stride(from: fake + 310, through: fake + 1000, by: 10))
        #expect(diary.tracker.openVisitCount == 1)  // `left` checked out at fake + 300
        try diary.flush(now: fake + 1000)
        #expect(try store.stats().uncorrectedVisits == 3)

        let correction = try diary.synchronise(bootID: "boot-1", wallMinusBoot: 1_000 + step)
        #expect(correction == ClockCorrection(step: step, correctedVisits: 2, uncorrectableVisits: 1))
        #expect(diary.clock == .synchronised)

        // After sync, time is the corrected wall clock: the present phone's visit goes on.
        try sighting(&diary, stays, stride(from: fake + step + 1010, through: fake + step + 1100, by: 10))
        try diary.close(now: fake + step + 1500, checkingOutOpenVisits: true)
        let visits = try store.visits()
        #expect(visits.count == 3)
        #expect(visits.map(\.checkIn) == [old.checkIn, fake + step, fake + step + 310])
        #expect(visits[1].checkOut == fake + step + 300)
        #expect(visits[2].checkOut == fake + step + 1100 && visits[2].samples == 80)
        #expect(visits.map(\.clockUncorrected) == [true, false, false])
        #expect(try store.uncorrectedVisitCount(in: .all) == 1)
        #expect(try store.uncorrectedVisitCount(in: VisitWindow(from: fake, to: nil)) == 0)

        // The export marks the one visit whose time could not be corrected.
        var csv: [UInt8] = []
        let venue = VenueIdentity(country: 826, state: 4, code: 1, name: "Test")
        let summary = try DiaryExport.export(.csv, from: store, window: .all, venue: venue, generatedAt: fake + step) { csv += $0 }
        #expect(summary.visits == 3 && summary.clockUncorrected == 1)
        #expect(summary.earliestEnd == visits.map { $0.checkOut ?? $0.lastSeen }.min())
        let lines = String(decoding: csv, as: UTF8.self).split(separator: "\r\n")
        #expect(lines.map { $0.split(separator: ",", omittingEmptySubsequences: false).dropLast().last.map(String.init) } == ["clock_uncorrected", "1", "0", "0"])
    }

    @Test func anOpenVisitsProgressIsCorrectedToo() throws {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: fake, clock: before)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        try sighting(&diary, key, stride(from: fake, through: fake + 600, by: 10))
        try diary.flush(now: fake + 600)
        try sighting(&diary, key, stride(from: fake + 610, through: fake + 700, by: 10))
        try diary.flush(now: fake + 700)  // the open visit's progress row now holds fake + 700
        // This process dies before sync; the next one (same boot) starts synchronised.
        var next = try VenueDiary(store: store, settings: settings(), now: fake + step + 710, clock: .synchronised)
        // Not resumed: its times are on the old clock until corrected.
        #expect(next.resumedVisits == 0 && next.closedStaleVisits == 1)
        let correction = try next.synchronise(bootID: "boot-1", wallMinusBoot: 1_000 + step)
        #expect(correction.step == 0 && correction.correctedVisits == 1)
        let visit = try #require(try store.visits().first)
        #expect(visit.checkIn == fake + step && visit.lastSeen == fake + step + 700 && visit.checkOut == fake + step + 700)
        #expect(!visit.clockUncorrected)
    }

    /// A diary holding one visit open since `fake` (last seen at `fake + 600`), recorded on the
    /// unsynchronised clock of boot-1 by a process that then stopped.
    func openVisitLeftBeforeSync() throws -> DiaryStore {
        let store = try DiaryStore(path: path)
        var diary = try VenueDiary(store: store, settings: settings(), now: fake, clock: before)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        try sighting(&diary, key, stride(from: fake, through: fake + 600, by: 10))
        try diary.flush(now: fake + 600)
        return store
    }

    @Test func aRestartInTheSameUnsynchronisedBootResumesItsOpenVisits() throws {
        let store = try openVisitLeftBeforeSync()
        // Its own reading of wall − boot time, a moment after the first one's.
        let sameBoot = try VenueDiary(
            store: store, settings: settings(), now: fake + 650, clock: .unsynchronised(bootID: "boot-1", wallMinusBoot: 1_000.002))
        #expect(sameBoot.resumedVisits == 1)
        let otherBoot = try VenueDiary(
            store: store, settings: settings(), now: fake + 650, clock: .unsynchronised(bootID: "boot-2", wallMinusBoot: 1_000))
        #expect(otherBoot.resumedVisits == 0 && otherBoot.closedStaleVisits == 1)
        #expect(try store.visits().first?.checkOut == fake + 600)
    }

    /// The same boot, but the clock was set by hand since (its `wall − CLOCK_BOOTTIME` moved):
    /// the open visit's times and the new clock's do not line up, so it is closed at its last
    /// sighting rather than resumed and stretched across the jump.
    @Test func aVisitOnAnotherClockOfTheSameBootIsClosedNotResumed() throws {
        let store = try openVisitLeftBeforeSync()
        let reset = try VenueDiary(
            store: store, settings: settings(), now: fake + 643, clock: .unsynchronised(bootID: "boot-1", wallMinusBoot: 1_043))
        #expect(reset.resumedVisits == 0 && reset.closedStaleVisits == 1)
        let visit = try #require(try store.visits().first)
        #expect(visit.checkIn == fake && visit.checkOut == fake + 600)
    }

    /// A diary written by the first release (schema v1) opens with its visits intact.
    @Test func aVersion1DiaryIsMigrated() throws {
        do {
            let queue = try DatabaseQueue(path: path)
            try DiarySchema.migrator.migrate(queue, upTo: "v1 visit")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO visit (kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum)
                    VALUES ('herald', x'0001', 100, 400, 400, 3, -50, -160), ('gaen', x'0203', 500, 700, NULL, 2, -60, -125)
                    """)
            }
            try queue.close()
        }
        let store = try DiaryStore(path: path)
        #expect(try store.visits().map(\.payload) == [[0, 1], [2, 3]])
        #expect(try store.openVisits().map(\.lastSeen) == [700])
        let (version, indexes, progress) = try store.database.read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA user_version"),
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'visit' AND sql IS NOT NULL ORDER BY name"),
                try db.tableExists("progress")
            )
        }
        #expect(version == DiarySchema.version && progress)
        #expect(indexes == ["visit_check_in", "visit_clock_boot"])
        // The open visit carries on as usual.
        var diary = try VenueDiary(store: store, settings: settings(), now: 750)
        #expect(diary.resumedVisits == 1)
        let key = diary.key(for: .gaen, payload: [2, 3])
        diary.record(key, time: 760, rssi: -61)
        try diary.close(now: 1200, checkingOutOpenVisits: true)
        #expect(try store.visits().last.map { [$0.lastSeen, $0.checkOut, Double($0.samples)] } == [760, 760, 3])
    }
}
