import Foundation
import GRDB
import Sightings
import Testing
import VenueDiary
@testable import Replication

/// A fresh directory for real SQLite files, removed when the value goes away.
final class HubTestDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("venue-hub-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// One visit state as a node sends it.
func replicated(
    _ visitID: Int64, change: Int64, payload: [UInt8] = [0xAB, 0x01], kind: PayloadKind = .herald, checkIn: Double = 1_000,
    lastSeen: Double? = nil, checkOut: Double? = nil, samples: Int = 3, rssiMax: Int = -50, rssiSum: Int = -180,
    clockUncorrected: Bool = false, sharedIdentity: Bool = false
) -> ReplicatedVisit {
    ReplicatedVisit(
        visitID: visitID, change: change, kind: kind, payload: payload, checkIn: checkIn,
        lastSeen: lastSeen ?? checkOut ?? checkIn + 60, checkOut: checkOut, samples: samples, rssiMax: rssiMax,
        rssiSum: rssiSum, clockUncorrected: clockUncorrected, sharedIdentity: sharedIdentity)
}

@Suite struct HubStoreTests {
    @Test func theSameVisitThreeTimesIsStoredOnce() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        let state = replicated(7, change: 5, checkIn: 1_000, checkOut: 1_400)
        for _ in 0..<3 {
            #expect(try store.commit(node: "hall", diary: "d1", prev: 0, visits: [state], now: 2_000) == 5)
        }
        let segments = try store.segments()
        #expect(segments.count == 1)
        let segment = try #require(segments.first)
        #expect(segment.node == "hall")
        #expect(segment.diary == "d1")
        #expect(segment.nodeVisitID == 7)
        #expect(segment.version == 5)
        #expect(segment.visit == Visit(
            id: segment.id, kind: .herald, payload: [0xAB, 0x01], checkIn: 1_000, lastSeen: 1_400, checkOut: 1_400,
            samples: 3, rssiMax: -50, rssiSum: -180))
        // The same visit id from another node is another visit.
        try store.commit(node: "room-2", diary: "d9", prev: 0, visits: [state], now: 2_000)
        #expect(try store.segments().count == 2)
    }

    /// A node's mark that two devices carried the identity at once is kept, and a later
    /// state of the visit carries it on.
    @Test func theSharedIdentityMarkIsKept() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        try store.commit(node: "hall", diary: "d1", prev: 0, visits: [replicated(7, change: 1, checkIn: 1_000)], now: 2_000)
        #expect(try store.segments().map(\.visit.sharedIdentity) == [false])
        try store.commit(
            node: "hall", diary: "d1", prev: 1, visits: [replicated(7, change: 2, checkIn: 1_000, checkOut: 1_400, sharedIdentity: true)],
            now: 2_000)
        #expect(try store.segments().map(\.visit.sharedIdentity) == [true])
    }

    /// A node keeping visits longer than the hub resends them after the hub's purge: they are
    /// acknowledged, never brought back.
    @Test func visitsPastRetentionAreAcknowledgedButNotKept() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        let acked = try store.commit(
            node: "hall", diary: "d1", prev: 0,
            visits: [replicated(1, change: 1, checkOut: 1_000), replicated(2, change: 2, checkIn: 5_000, checkOut: 6_000), replicated(3, change: 3, checkIn: 500)],
            now: 10_000, expiredBefore: 5_500)
        #expect(acked == 3)
        // The expired closed visit is gone; the recent one and the open one are kept.
        #expect(try store.segments().map(\.nodeVisitID).sorted() == [2, 3])
    }

    @Test func anOlderVersionNeverOverwritesANewer() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        try store.commit(node: "hall", diary: "d1", prev: 0, visits: [replicated(1, change: 7, checkOut: 2_000, samples: 9)], now: 1)
        // A checkpoint of the open visit (change 4) arrives late.
        try store.commit(node: "hall", diary: "d1", prev: 0, visits: [replicated(1, change: 4, lastSeen: 1_500, samples: 5)], now: 2)
        var visit = try #require(try store.segments().first)
        #expect(visit.version == 7)
        #expect(visit.visit.checkOut == 2_000)
        #expect(visit.visit.samples == 9)
        // A newer one does replace it (a clock correction, say).
        try store.commit(
            node: "hall", diary: "d1", prev: 7,
            visits: [replicated(1, change: 9, checkIn: 900, checkOut: 1_900, samples: 9, clockUncorrected: true)], now: 3)
        visit = try #require(try store.segments().first)
        #expect(visit.version == 9)
        #expect(visit.visit.checkIn == 900)
        #expect(visit.visit.checkOut == 1_900)
        #expect(visit.visit.clockUncorrected)
    }

    @Test func acknowledgementWaitsForAGapToBeFilled() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        #expect(try store.acked(node: "hall", diary: "d1") == 0)
        let first = [replicated(1, change: 1), replicated(2, change: 2), replicated(1, change: 3, checkOut: 1_200)]
        #expect(try store.commit(node: "hall", diary: "d1", prev: 0, visits: first, now: 10) == 3)
        // Changes 4 and 5 are lost; 6 and 7 arrive: stored, not acknowledged.
        let later = [replicated(3, change: 6), replicated(4, change: 7)]
        #expect(try store.commit(node: "hall", diary: "d1", prev: 5, visits: later, now: 11) == 3)
        #expect(try store.acked(node: "hall", diary: "d1") == 3)
        #expect(try store.segments().count == 4)
        // An empty message in the gap changes nothing; an empty one after what is held neither.
        #expect(try store.commit(node: "hall", diary: "d1", prev: 7, visits: [], now: 12) == 3)
        #expect(try store.commit(node: "hall", diary: "d1", prev: 3, visits: [], now: 12) == 3)
        // The node resends from 3: the gap is filled.
        let resent = [replicated(5, change: 4), replicated(2, change: 5, checkOut: 1_300)]
        #expect(try store.commit(node: "hall", diary: "d1", prev: 3, visits: resent, now: 13) == 5)
        #expect(try store.commit(node: "hall", diary: "d1", prev: 5, visits: later, now: 14) == 7)
        #expect(try store.acked(node: "hall", diary: "d1") == 7)
        // A message from before what is acknowledged never lowers it.
        #expect(try store.commit(node: "hall", diary: "d1", prev: 0, visits: first, now: 15) == 7)
        #expect(try store.segments().count == 5)
        #expect(try store.status(now: 15).first?.lastSeen == 15)
    }

    @Test func changesOutOfOrderAreRefusedAndNothingIsWritten() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        for batch in [[replicated(1, change: 2), replicated(2, change: 2)], [replicated(1, change: 3), replicated(2, change: 1)]] {
            #expect(throws: HubStoreError.self) {
                try store.commit(node: "hall", diary: "d1", prev: 0, visits: batch, now: 1)
            }
        }
        #expect(throws: HubStoreError.self) {
            try store.commit(node: "Hall 1", diary: "d1", prev: 0, visits: [replicated(1, change: 1)], now: 1)
        }
        #expect(try store.segments().isEmpty)
        #expect(try store.acked(node: "hall", diary: "d1") == 0)
        #expect(try store.status(now: 1).isEmpty)
    }

    @Test func aNewDiaryOfTheSameNodeStartsAtZero() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        let old = (1...10).map { replicated($0, change: $0) }
        #expect(try store.commit(node: "hall", diary: "old", prev: 0, visits: old, now: 100) == 10)
        #expect(try store.acked(node: "hall", diary: "new") == 0)
        // The node's diary was replaced: its changes and visit ids start again.
        let new = [replicated(1, change: 1, payload: [0x99]), replicated(2, change: 2, payload: [0x98])]
        #expect(try store.commit(node: "hall", diary: "new", prev: 0, visits: new, now: 200) == 2)
        #expect(try store.acked(node: "hall", diary: "old") == 10)
        #expect(try store.segments().count == 12)
        let hall = try #require(try store.status(now: 300).first)
        #expect(hall.diaries.map(\.diary) == ["old", "new"])
        #expect(hall.diaries.map(\.firstSeen) == [100, 200])
        #expect(hall.acked == 2)
        #expect(hall.visits == 12)
    }

    @Test func theFileIsPrivate() throws {
        let directory = try HubTestDirectory()
        let path = directory.path("hub.sqlite")
        let store = try HubStore(path: path)
        try store.commit(node: "hall", diary: "d1", prev: 0, visits: [replicated(1, change: 1)], now: 1)
        for file in [path, path + "-wal"] {
            var info = stat()
            #expect(stat(file, &info) == 0, "\(file) exists")
            #expect(info.st_mode & 0o777 == 0o600, "\(file) mode \(String(info.st_mode & 0o777, radix: 8))")
        }
        let secureDelete = try store.database.read { db in
            try Int.fetchOne(db, sql: "PRAGMA secure_delete")
        }
        #expect(secureDelete == 1)
        let (synchronous, journal) = try store.database.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(synchronous == 2)  // FULL
        #expect(journal == "wal")
    }

    @Test func purgeDeletesByRecordingDays() throws {
        let directory = try HubTestDirectory()
        let path = directory.path("hub.sqlite")
        let store = try HubStore(path: path)
        let now = 100 * 86_400.0
        let day = 86_400.0
        let visits = [
            replicated(1, change: 1, payload: [1], checkIn: now - 40 * day, checkOut: now - 40 * day + 600),
            replicated(2, change: 2, payload: [2], checkIn: now - 10 * day, checkOut: now - 10 * day + 600),
            // Open since long ago: never purged while open.
            replicated(3, change: 3, payload: [3], checkIn: now - 50 * day, lastSeen: now - 60),
        ]
        try store.commit(node: "hall", diary: "d1", prev: 0, visits: visits, now: now)
        // Gaps: one that ended 40 days ago, one still open since room-2 was last heard, 46 days ago.
        try store.recordStatus(node: "hall", online: false, clockSynchronised: nil, now: now - 41 * day)
        try store.recordStatus(node: "hall", online: true, clockSynchronised: nil, now: now - 40 * day)
        try store.recordStatus(node: "room-2", online: true, clockSynchronised: nil, now: now - 46 * day)
        try store.recordStatus(node: "room-2", online: false, clockSynchronised: nil, now: now - 45 * day)

        #expect(try store.purge(now: now, recordingDays: nil) == 0)
        #expect(try store.segments().count == 3)
        #expect(try store.purge(now: now, recordingDays: 31) == 1)
        #expect(try store.segments().map(\.nodeVisitID).sorted() == [2, 3])
        let status = try store.status(now: now)
        #expect(status.map(\.name) == ["hall", "room-2"])
        #expect(status[0].gaps.isEmpty)
        #expect(status[1].gaps == [HubGap(start: now - 46 * day, end: now, isOpen: true)])
        #expect(try store.purge(now: now, recordingDays: 31) == 0)
        // 0: every finished visit; acknowledgements stay.
        #expect(try store.purge(now: now, recordingDays: 0) == 1)
        #expect(try store.segments().map(\.nodeVisitID) == [3])
        #expect(try store.acked(node: "hall", diary: "d1") == 3)
        #expect(throws: HubStoreError.self) { try store.purge(now: now, recordingDays: -1) }
        // Secure delete: the purged payload is nowhere in the file or its log.
        let marker = Data([0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x9A])
        try store.commit(
            node: "hall", diary: "d1", prev: 3,
            visits: [replicated(4, change: 4, payload: Array(marker), checkIn: now - 60, checkOut: now - 30)], now: now)
        #expect(try fileContents(path).range(of: marker) != nil || fileContents(path + "-wal").range(of: marker) != nil)
        #expect(try store.purge(now: now, recordingDays: 0) == 1)
        #expect(try fileContents(path).range(of: marker) == nil)
        #expect(try fileContents(path + "-wal").range(of: marker) == nil)
    }

    @Test func offlinePeriodsBecomeGaps() throws {
        let directory = try HubTestDirectory()
        let store = try HubStore(path: directory.path("hub.sqlite"))
        try store.recordStatus(node: "hall", online: true, clockSynchronised: false, now: 100)
        try store.recordStatus(node: "hall", online: false, clockSynchronised: nil, now: 200)
        try store.recordStatus(node: "hall", online: false, clockSynchronised: nil, now: 250)  // the will again
        try store.recordStatus(node: "hall", online: true, clockSynchronised: true, now: 500)
        try store.recordStatus(node: "hall", online: true, clockSynchronised: nil, now: 600)
        // The will, or a will the broker kept while the hub was down, comes after the node went:
        // the gap starts when the node was last heard.
        try store.recordStatus(node: "hall", online: false, clockSynchronised: nil, now: 900)

        let hall = try #require(try store.status(now: 1_000).first)
        #expect(hall.name == "hall")
        #expect(!hall.online)
        #expect(hall.lastSeen == 600)  // an offline status is not hearing from the node
        #expect(hall.clockSynchronised == true)  // nil kept what it said
        #expect(hall.gaps == [HubGap(start: 100, end: 500, isOpen: false), HubGap(start: 600, end: 1_000, isOpen: true)])
        // Only the gaps overlapping the window.
        #expect(try store.status(now: 1_000, window: VisitWindow(from: 601, to: nil)).first?.gaps.map(\.start) == [600])
        #expect(try store.status(now: 1_000, window: VisitWindow(from: nil, to: 300)).first?.gaps.map(\.start) == [100])
        #expect(try store.status(now: 1_000, window: VisitWindow(from: 501, to: 599)).first?.gaps == [])
        // Back online: the gap closes.
        try store.recordStatus(node: "hall", online: true, clockSynchronised: nil, now: 1_100)
        let back = try #require(try store.status(now: 2_000).first)
        #expect(back.online)
        #expect(back.gaps.last == HubGap(start: 600, end: 1_100, isOpen: false))
        // A batch is hearing from the node too.
        try store.commit(node: "hall", diary: "d1", prev: 0, visits: [replicated(1, change: 1)], now: 1_500)
        #expect(try store.status(now: 2_000).first?.lastSeen == 1_500)
    }

    @Test func otherFilesAreRefusedUntouched() throws {
        let directory = try HubTestDirectory()
        // A node's venue diary.
        let diaryPath = directory.path("diary.sqlite")
        _ = try DiaryStore(path: diaryPath)
        // Some other application's database.
        let otherPath = directory.path("other.sqlite")
        try DatabaseQueue(path: otherPath).write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        // Not SQLite.
        let textPath = directory.path("notes.txt")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: textPath))

        for path in [diaryPath, otherPath, textPath] {
            let before = try fileContents(path)
            do {
                _ = try HubStore(path: path)
                Issue.record("\(path) was opened as a hub store")
            } catch let error as HubStoreError {
                guard case .notAHubStore(let named, _) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(named == path)
                #expect(error.description.contains(path))
                #expect(error.description.contains("not a venue hub store"))
            }
            #expect(try fileContents(path) == before)
        }
        // A hub store reopens, keeping what it holds; an empty file is adopted.
        let hubPath = directory.path("hub.sqlite")
        do {
            let store = try HubStore(path: hubPath)
            try store.commit(node: "hall", diary: "d1", prev: 0, visits: [replicated(1, change: 4)], now: 1)
        }
        #expect(try HubStore(path: hubPath).acked(node: "hall", diary: "d1") == 4)
        let emptyPath = directory.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: emptyPath, contents: nil))
        #expect(try HubStore(path: emptyPath).segments().isEmpty)
    }
}

func fileContents(_ path: String) throws -> Data {
    FileManager.default.contents(atPath: path) ?? Data()
}
