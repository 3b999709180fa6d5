import Foundation
import GRDB
import Testing
@testable import VenueDiary

@Suite struct DiaryStoreTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    static let day = 86_400.0

    func visit(_ id: UInt32, checkIn: Double, checkOut: Double?, lastSeen: Double? = nil, samples: Int = 10) -> Visit {
        Visit(
            kind: .herald, payload: heraldPayload(id), checkIn: checkIn, lastSeen: lastSeen ?? checkOut ?? checkIn + 60,
            checkOut: checkOut, samples: samples, rssiMax: -50, rssiSum: -600)
    }

    /// Creates a diary at `path` and closes it again.
    func makeDiary(_ path: String, visits: [Visit] = []) throws {
        let store = try DiaryStore(path: path)
        try store.save(visits)
    }

    @Test func aNewDiaryIsAVersionedWALDatabaseWithSecureDeleteAndFullSync() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let (applicationID, version, journal, hasVisits) = try store.database.read { db in
            (
                try Int32.fetchOne(db, sql: "PRAGMA application_id"), try Int.fetchOne(db, sql: "PRAGMA user_version"),
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try db.tableExists("visit")
            )
        }
        #expect(applicationID == DiarySchema.applicationID && version == DiarySchema.version)
        #expect(journal == "wal" && hasVisits)
        let (synchronous, secureDelete, checkpoint) = try store.database.write { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA synchronous"), try Int.fetchOne(db, sql: "PRAGMA secure_delete"),
                try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
            )
        }
        #expect(synchronous == 2 && secureDelete == 1 && checkpoint == 8000)
        // Small pages: a commit appends each page it changes to the WAL (SD-card wear).
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") } == 512)
        #expect(try store.stats() == DiaryStats(visits: 0, openVisits: 0, oldestCheckIn: nil, newestCheckOut: nil, uncorrectedVisits: 0, fileBytes: store.stats().fileBytes))
        #expect(try store.stats().fileBytes > 0)
    }

    @Test func aDiaryReopensWithItsVisits() throws {
        let path = dir.path("diary.sqlite")
        try makeDiary(path, visits: [visit(1, checkIn: 1000, checkOut: 2000)])
        let store = try DiaryStore(path: path)
        #expect(try store.visits().map(\.checkIn) == [1000])
        let readOnly = try DiaryStore(path: path, readOnly: true)
        #expect(try readOnly.visits().count == 1)
    }

    @Test func anEmptyFileBecomesADiary() throws {
        let path = dir.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let store = try DiaryStore(path: path)
        try store.save([visit(1, checkIn: 0, checkOut: 100)])
        #expect(try store.stats().visits == 1)
    }

    @Test func aReaderRefusesAMissingDiaryWithoutCreatingIt() throws {
        let path = dir.path("missing.sqlite")
        #expect(throws: DiaryError.missing(path: path)) { try DiaryStore(path: path, readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndLeftAlone() throws {
        let path = dir.path("notes.txt")
        let original = Data("time,kind,payload,rssi\nnot a database at all, but long enough to look like one\n".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: original))
        for readOnly in [false, true] {
            #expect(throws: DiaryError.notADiary(path: path, reason: "not an SQLite database")) {
                try DiaryStore(path: path, readOnly: readOnly)
            }
        }
        #expect(fileBytes(path) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path) == ["notes.txt"])
    }

    @Test func anotherSQLiteDatabaseIsRefusedAndLeftAlone() throws {
        let path = dir.path("other.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE visit (id INTEGER PRIMARY KEY, note TEXT)")
                try db.execute(sql: "INSERT INTO visit (note) VALUES ('somebody else''s data')")
            }
            try queue.close()
        }
        let original = try #require(fileBytes(path))
        let error = thrownError(DiaryError.self) { try DiaryStore(path: path) }
        guard case .notADiary(let refused, let reason)? = error else {
            Issue.record("expected notADiary, got \(String(describing: error))")
            return
        }
        #expect(refused == path)
        #expect(reason.contains("application_id 0x0"))
        #expect("\(error!)".contains("not a venue diary"))
        #expect(fileBytes(path) == original)
    }

    @Test func aDiaryFromANewerBuildIsRefusedAndLeftAlone() throws {
        let path = dir.path("future.sqlite")
        try makeDiary(path, visits: [visit(1, checkIn: 1000, checkOut: 2000)])
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "ALTER TABLE visit ADD COLUMN venue_zone TEXT")
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v2 zones')")
                try db.execute(sql: "PRAGMA user_version = 2")
            }
            try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try queue.close()
        }
        let original = try #require(fileBytes(path))
        for readOnly in [false, true] {
            #expect(throws: DiaryError.newerSchema(path: path, version: 2, supported: DiarySchema.version)) {
                try DiaryStore(path: path, readOnly: readOnly)
            }
        }
        #expect(fileBytes(path) == original)
    }

    @Test func anUnknownMigrationAloneMarksANewerSchema() throws {
        let path = dir.path("future.sqlite")
        try makeDiary(path)
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v2 zones')") }
            try queue.close()
        }
        #expect(throws: DiaryError.newerSchema(path: path, version: DiarySchema.version, supported: DiarySchema.version)) {
            try DiaryStore(path: path)
        }
    }

    @Test func visitsOverlappingAWindow() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        try store.save([
            visit(1, checkIn: 100, checkOut: 900),  // ends before the window
            visit(2, checkIn: 900, checkOut: 1000),  // ends exactly at its start
            visit(3, checkIn: 1500, checkOut: 2500),  // inside
            visit(4, checkIn: 2900, checkOut: 3500),  // starts inside, ends after
            visit(5, checkIn: 3000, checkOut: 3100),  // starts exactly at its end
            visit(6, checkIn: 3001, checkOut: 3100),  // starts after
            visit(7, checkIn: 500, checkOut: nil, lastSeen: 600),  // still open: lasts until now
        ])
        let window = VisitWindow(from: 1000, to: 3000)
        #expect(try store.visits(in: window).map { $0.payload[3] } == [7, 2, 3, 4, 5])
        #expect(try store.visits().count == 7)
        var streamed: [Visit] = []
        try store.forEachVisit(in: window) { streamed.append($0) }
        #expect(try streamed == store.visits(in: window))
    }

    @Test func retentionDeletesFinishedVisitsOlderThanTheRecordingDays() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let now = 1_795_305_600.0  // 2026-11-22T00:00:00Z
        let cutoff = now - 31 * Self.day
        try store.save([
            visit(1, checkIn: cutoff - 3600, checkOut: cutoff - 1),  // checked out before the cutoff
            visit(2, checkIn: cutoff - 3600, checkOut: cutoff),  // exactly at it: kept
            visit(3, checkIn: cutoff - 1800, checkOut: cutoff + 1800),  // spans the boundary: kept
            visit(4, checkIn: cutoff - Self.day, checkOut: nil, lastSeen: cutoff + 60),  // open, seen since: kept
            visit(5, checkIn: now - 3600, checkOut: now - 60),
            // Open but last seen before the cutoff (an interrupted replay left it): by its last sighting.
            visit(6, checkIn: cutoff - Self.day, checkOut: nil, lastSeen: cutoff - 60),
        ])
        #expect(try store.purge(now: now, recordingDays: nil) == 0)
        #expect(try store.purge(now: now, recordingDays: 31) == 2)
        #expect(try store.visits().map { $0.payload[3] }.sorted() == [2, 3, 4, 5])
        #expect(try store.purge(now: now, recordingDays: 31) == 0)
        #expect(try store.purge(now: now + 1, recordingDays: 31) == 1)
        #expect(throws: DiaryError.self) { try store.purge(now: now, recordingDays: -1) }
        #expect(try store.purge(now: now, recordingDays: 0) == 3)
        #expect(try store.stats().visits == 0)
    }

    @Test func purgedVisitsDoNotLingerInTheFile() throws {
        let path = dir.path("diary.sqlite")
        let store = try DiaryStore(path: path)
        let marker: [UInt8] = Array("PURGED-PAYLOAD-MARKER".utf8)
        try store.save([Visit(kind: .advert, payload: marker, checkIn: 0, lastSeen: 60, checkOut: 60, samples: 1, rssiMax: -50, rssiSum: -50)])
        try store.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        #expect(fileBytes(path)?.range(of: Data(marker)) != nil)
        #expect(try store.purge(now: 10 * Self.day, recordingDays: 1) == 1)
        for file in [path, path + "-wal"] {
            #expect(fileBytes(file)?.range(of: Data(marker)) == nil)
        }
    }

    /// SQLite's secure_delete zeroes a deleted row and every freed page, but a page rebuilt when
    /// its rows grow or go (a rebalance) keeps its old layout's bytes in its unallocated middle:
    /// a copy of a row that once moved can outlive the row inside a page of newer visits (the
    /// year simulation found an identifier so). Days of the node's shape of writes: visits of
    /// both sizes (16-byte identifiers, 129-byte payloads) saved open, then closed with grown
    /// counts in another order, retention daily; no purged identity may be left anywhere in the
    /// file or its log after the purge that deleted it.
    @Test func purgedVisitsLeaveNoCopyInPagesSQLiteRebuilt() throws {
        let path = dir.path("diary.sqlite")
        let store = try DiaryStore(path: path)
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return random >> 11
        }
        var held: [[UInt8]: Double] = [:]  // payload → check-out
        var left = 0
        for day in 0..<120 {
            let opening = Double(day) * Self.day + 9 * 3600
            let visits = (0..<30).map { n -> Visit in
                let size = next() % 10 < 6 ? 16 : 129
                let payload = (0..<size).map { _ in UInt8(truncatingIfNeeded: next()) }
                let checkIn = opening + Double(n * 600 + Int(next() % 600))
                return Visit(
                    kind: size == 16 ? .gaen : .herald, payload: payload, checkIn: checkIn, lastSeen: checkIn,
                    checkOut: nil, samples: 1, rssiMax: -60, rssiSum: -60)
            }
            try store.save(visits)
            var closing = visits
            for i in stride(from: closing.count - 1, to: 0, by: -1) { closing.swapAt(i, Int(next() % UInt64(i + 1))) }
            for start in stride(from: 0, to: closing.count, by: 6) {
                let closed = closing[start..<min(start + 6, closing.count)].map { visit -> Visit in
                    var visit = visit
                    visit.checkOut = visit.checkIn + Double(60 + next() % 7200)
                    visit.lastSeen = visit.checkOut ?? visit.checkIn
                    visit.samples = Int(10 + next() % 3000)
                    visit.rssiSum = -Int(1000 + next() % 200_000)
                    held[visit.payload] = visit.checkOut
                    return visit
                }
                try store.save(closed)
            }
            let now = Double(day + 1) * Self.day
            try store.purge(now: now, recordingDays: 31)
            let gone = held.filter { $0.value < now - 31 * Self.day }.map(\.key)
            for payload in gone { held[payload] = nil }
            let bytes = (fileBytes(path) ?? Data()) + (fileBytes(path + "-wal") ?? Data())
            left += gone.filter { bytes.range(of: Data($0)) != nil }.count
        }
        #expect(left == 0)
        #expect(try store.visits().count == held.count)
    }

    @Test func savingAVisitAgainUpdatesItInsteadOfDuplicating() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let complete = visit(1, checkIn: 1000, checkOut: 2000, samples: 50)
        try store.save([complete])
        var partial = complete
        partial.checkOut = nil
        partial.lastSeen = 1500
        partial.samples = 20
        try store.save([partial, complete, partial])
        let stored = try store.visits()
        #expect(stored.count == 1)
        #expect(stored.first?.checkOut == 2000 && stored.first?.samples == 50)
    }

    @Test func statsCountVisitsAndOpenVisits() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        try store.save([
            visit(1, checkIn: 1000, checkOut: 2000),
            visit(2, checkIn: 1500, checkOut: nil, lastSeen: 1700),
            visit(3, checkIn: 3000, checkOut: 4000),
        ])
        let stats = try store.stats()
        #expect(stats.visits == 3 && stats.openVisits == 1)
        #expect(stats.oldestCheckIn == 1000 && stats.newestCheckOut == 4000)
        #expect(stats.fileBytes >= 4096)
    }

    /// A diary of schema v2 (before the metadata column) is migrated; its visits have none.
    @Test func aVersion2DiaryGainsTheMetadataColumn() throws {
        let path = dir.path("v2.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try DiarySchema.migrator.migrate(queue, upTo: "v2 progress and clock")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO visit (kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum)
                    VALUES ('gaen', x'0203', 100, 400, 400, 3, -50, -160)
                    """)
            }
            try queue.close()
        }
        let store = try DiaryStore(path: path)
        #expect(try store.visits().map(\.metadata) == [nil])
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") } == DiarySchema.version)
    }

    /// Visits recorded before the shared-identity mark existed read as unmarked; new ones keep it.
    @Test func aVersion4DiaryGainsTheSharedMark() throws {
        let path = dir.path("v4.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try DiarySchema.migrator.migrate(queue, upTo: "v4 replication")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO visit (kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum)
                    VALUES ('herald', x'0203', 100, 400, 400, 3, -50, -160)
                    """)
            }
            try queue.close()
        }
        let store = try DiaryStore(path: path)
        #expect(try store.visits().map(\.sharedIdentity) == [false])
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") } == 5)
        try store.save([Visit(kind: .herald, payload: [9], checkIn: 500, lastSeen: 900, checkOut: 900, samples: 2, rssiMax: -40, rssiSum: -80, sharedIdentity: true)])
        #expect(try store.visits().map(\.sharedIdentity) == [false, true])
    }
}
