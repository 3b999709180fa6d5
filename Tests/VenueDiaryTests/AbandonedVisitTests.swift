import Foundation
import GRDB
import Testing
@testable import VenueDiary

/// Visits an interrupted replay (killed, a full disk, a file that changed) or a service that
/// did not stop cleanly left open: closed at their last sighting at the next use, purged by
/// their last sighting, never exported as present now.
@Suite struct AbandonedVisitTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    let now = 1_795_197_600.0
    let settings = DiarySettings(checkOutSeconds: 300)

    func open(_ id: UInt32, lastSeenAgo: Double) -> Visit {
        Visit(
            kind: .herald, payload: heraldPayload(id), checkIn: now - lastSeenAgo - 600, lastSeen: now - lastSeenAgo,
            samples: 4, rssiMax: -50, rssiSum: -220)
    }

    @Test func onlyVisitsUnseenPastTheLimitAreClosedAtTheirLastSighting() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        // 300 s check-out + twice the live commit interval (600 s): 1500 s.
        #expect(settings.abandonedAfter == 1500)
        try store.save([open(1, lastSeenAgo: 1501), open(2, lastSeenAgo: 1499), open(3, lastSeenAgo: 86_400 * 3)])
        #expect(try store.closeAbandonedVisits(now: now, abandonedAfter: settings.abandonedAfter) == 2)
        let visits = Dictionary(uniqueKeysWithValues: try store.visits().map { ($0.payload, $0) })
        #expect(visits[heraldPayload(1)]?.checkOut == now - 1501)
        #expect(visits[heraldPayload(2)]?.checkOut == nil)
        #expect(visits[heraldPayload(3)]?.checkOut == now - 86_400 * 3)
        // Closing is a write: the venue hub is sent the closed state.
        #expect(try store.changes(after: 3, limit: 10).count == 2)
        #expect(try store.closeAbandonedVisits(now: now, abandonedAfter: settings.abandonedAfter) == 0)
    }

    @Test func aVisitOnAnUnsynchronisedClockIsLeftToTheService() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        try store.save([open(1, lastSeenAgo: 5000)], clock: .unsynchronised(bootID: "boot-1", wallMinusBoot: 1000))
        #expect(try store.closeAbandonedVisits(now: now, abandonedAfter: settings.abandonedAfter) == 0)
        #expect(try store.openVisits().count == 1)
    }

    @Test func purgeTakesOpenVisitsByTheirLastSighting() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        try store.save([open(1, lastSeenAgo: 40 * 86_400), open(2, lastSeenAgo: 60)])
        // An open visit's newer last sighting lives in its progress row: it counts.
        try store.database.write { db in
            let id = try Int64.fetchOne(db, sql: "SELECT id FROM visit WHERE payload = ?", arguments: [Data(heraldPayload(1))])!
            try db.execute(sql: "INSERT INTO progress (visit, last_seen, samples, rssi_max, rssi_sum) VALUES (?, ?, 5, -50, -270)", arguments: [id, now - 35 * 86_400])
        }
        #expect(try store.purge(now: now, recordingDays: 31) == 1)
        #expect(try store.visits().map(\.payload) == [heraldPayload(2)])
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM progress") } == 0)
        // Within the days it stays, though it is old enough to be abandoned.
        try store.save([open(3, lastSeenAgo: 20 * 86_400)])
        #expect(try store.purge(now: now, recordingDays: 31) == 0)
    }

    @Test func anExportShowsAnAbandonedVisitClosedAndALiveOneOpen() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        try store.save([open(1, lastSeenAgo: 7200), open(2, lastSeenAgo: 30)])
        var out: [UInt8] = []
        try DiaryExport.export(
            .csv, from: store, window: .all, venue: VenueIdentity(country: 826, state: 0, code: 1, name: "X"), generatedAt: now,
            abandonedAfter: settings.abandonedAfter
        ) { out += $0 }
        let rows = String(decoding: out, as: UTF8.self).split(whereSeparator: \.isNewline).dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.count == 2)
        // check_out is the 5th column: the abandoned visit's last sighting; the live one's empty.
        #expect(rows[0][4] == Substring(UTCTime.iso8601(now - 7200)))
        #expect(rows[1][4] == "")
        // Without the limit (a test, an old caller) open stays open.
        var plain: [UInt8] = []
        try DiaryExport.export(.csv, from: store, window: .all, venue: VenueIdentity(country: 826, state: 0, code: 1, name: "X"), generatedAt: now) { plain += $0 }
        #expect(String(decoding: plain, as: UTF8.self).split(whereSeparator: \.isNewline)[1].split(separator: ",", omittingEmptySubsequences: false)[4] == "")
    }
}
