import Foundation
import GRDB
import Testing
@testable import VenueDiary

@Suite struct DiaryReplayTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    let t0 = 1_795_197_600.0

    /// A phone that stays 10 minutes, one that walks past, one that steps out for 10 minutes.
    var evening: String {
        var rows = ["time,kind,payload,rssi"]
        for t in stride(from: 0, through: 600, by: 10) { rows.append("\(Int(t0) + t),herald,aa01,-60") }
        for t in stride(from: 30, through: 80, by: 10) { rows.append("\(Int(t0) + t),herald,bb02,-85") }
        for t in stride(from: 0, through: 1800, by: 15) where !(600...1200).contains(t) {
            rows.append("\(Int(t0) + t),gaen,cc03,-70")
        }
        return rows.joined(separator: "\n") + "\n"
    }

    @Test func aReplayWritesTheCheckedInVisitsAndClosesThemAtTheEnd() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try DiaryReplay.replay(csv: Array(evening.utf8), into: store, settings: settings())
        #expect(summary.sightings == 61 + 6 + 80)
        #expect(summary.visits == 3 && summary.walkPasts == 1 && summary.batches >= 1)
        let visits = try store.visits()
        #expect(visits.map(\.payload) == [[0xAA, 0x01], [0xCC, 0x03], [0xCC, 0x03]])
        #expect(visits.map(\.checkIn) == [t0, t0, t0 + 1215])
        #expect(visits.map(\.checkOut) == [t0 + 600, t0 + 585, t0 + 1800])
        #expect(visits.allSatisfy { !$0.isOpen })
    }

    /// Sightings without RSSI (an empty column) are presence, whatever `min_rssi` says, and stay
    /// out of the RSSI statistics: the visit the live node records for a phone it never measured.
    @Test func sightingsWithoutRSSIMakeAVisitWithoutSamples() throws {
        var rows = ["time,kind,payload,rssi"]
        for t in stride(from: 0, through: 600, by: 10) {
            rows.append("\(Int(t0) + t),herald,aa01,")  // never measured
            rows.append("\(Int(t0) + t),herald,bb02,\(t == 300 ? "-40" : "")")  // measured once
            rows.append("\(Int(t0) + t),herald,cc03,-70")  // weaker than min_rssi: ignored
        }
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try DiaryReplay.replay(
            csv: Array(rows.joined(separator: "\n").utf8), into: store, settings: settings(minRSSI: -50))
        #expect(summary.visits == 2)
        let visits = try store.visits().sorted { $0.payload.lexicographicallyPrecedes($1.payload) }
        #expect(visits.map(\.payload) == [[0xAA, 0x01], [0xBB, 0x02]])
        #expect(visits.map(\.samples) == [0, 1])
        #expect(visits[1].rssiMax == -40 && visits[1].rssiSum == -40)
        #expect(visits.allSatisfy { $0.checkIn == t0 && $0.checkOut == t0 + 600 })
    }

    /// A `gaen` payload of 20 bytes is the RPI and its 4 bytes of metadata: the visit's identity
    /// stays the RPI (16-byte rows of the same RPI join the same visit) and the metadata is kept.
    @Test func gaenMetadataIsKeptBesideTheIdentifier() throws {
        let rpi = "8be6cd371c5c891604bfbe49df845096"
        var rows = ["time,kind,payload,rssi"]
        for t in stride(from: 0, through: 300, by: 30) {
            rows.append("\(Int(t0) + t),gaen,\(rpi)\(t == 60 ? "" : "72033874"),-60")
            rows.append("\(Int(t0) + t),gaen,0102030405060708090a0b0c0d0e0f10,-70")  // no metadata heard
            rows.append("\(Int(t0) + t),herald,0102030405060708090a0b0c0d0e0f1011121314,-70")  // other kinds: as is
        }
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try DiaryReplay.replay(csv: Array(rows.joined(separator: "\n").utf8), into: store, settings: settings())
        #expect(summary.visits == 3)
        let visits = try store.visits()
        let gaen = try #require(visits.first { $0.payload.count == 16 && $0.payload.first == 0x8b })
        #expect(gaen.samples == 11)
        #expect(gaen.metadata == [0x72, 0x03, 0x38, 0x74])
        #expect(visits.first { $0.payload.first == 0x01 && $0.kind == .gaen }?.metadata == nil)
        #expect(visits.first { $0.kind == .herald }?.payload.count == 20)
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
        #expect(try store.database.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") } == 3)
    }

    @Test func replayingTheSameFileTwiceDoesNotDuplicateVisits() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        _ = try DiaryReplay.replay(csv: Array(evening.utf8), into: store, settings: settings())
        let first = try store.visits()
        _ = try DiaryReplay.replay(csv: Array(evening.utf8), into: store, settings: settings())
        #expect(try store.visits() == first)
    }

    @Test func unsortedRowsAreReplayedInTimeOrder() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        var lines = evening.split(separator: "\n").map(String.init)
        let header = lines.removeFirst()
        let shuffled = [header] + lines.reversed()
        let summary = try DiaryReplay.replay(csv: Array(shuffled.joined(separator: "\n").utf8), into: store, settings: settings())
        #expect(summary.visits == 3 && summary.walkPasts == 1)
        #expect(try store.visits().map(\.checkIn) == [t0, t0, t0 + 1215])
    }

    @Test func aMalformedRowChangesNothing() throws {
        let path = dir.path("diary.sqlite")
        let store = try DiaryStore(path: path)
        _ = try DiaryReplay.replay(csv: Array(evening.utf8), into: store, settings: settings())
        let before = try store.visits()
        var rows = evening.split(separator: "\n").map(String.init)
        rows.append("\(Int(t0) + 4000),herald,dd04,-60")
        rows.append("\(Int(t0) + 4200),herald,dd04,-60")
        rows.insert("\(Int(t0) + 700),herald,dd04,loud", at: 100)
        let bad = rows.joined(separator: "\n")
        #expect(throws: SightingsCSVError(line: 101, problem: "rssi 'loud' is not a whole number of dBm from -127 to 127")) {
            try DiaryReplay.replay(csv: Array(bad.utf8), into: store, settings: settings())
        }
        #expect(try store.visits() == before)
    }

    @Test func aLongReplayCommitsInBatchesAndReportsEach() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        var sightings: [Sighting] = []
        for phone in 0..<50 {
            let arrive = Double(phone * 200)
            for t in stride(from: arrive, through: arrive + 600, by: 20) {
                sightings.append(Sighting(time: t0 + t, kind: .herald, payload: heraldPayload(UInt32(phone)), rssi: -60))
            }
        }
        var reported: [Int] = []
        let policy = FlushPolicy(interval: 3600, maxPendingChanges: 10, checkInsWithin: 3600)
        let summary = try DiaryReplay.replay(sightings, into: store, settings: settings(), policy: policy) { reported.append($0.batches) }
        #expect(summary.visits == 50)
        #expect(summary.batches >= 5)
        #expect(reported == Array(1...summary.batches))
        #expect(try store.stats().visits == 50)
    }

    @Test func minRSSIAndRecordingDaysApplyToReplays() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let quiet = try DiaryReplay.replay(csv: Array(evening.utf8), into: store, settings: settings(minRSSI: -80))
        #expect(quiet.ignoredWeak == 6 && quiet.walkPasts == 0 && quiet.visits == 3)
        #expect(try store.purge(now: t0, recordingDays: 0) == 3)
        let off = try DiaryReplay.replay(csv: Array(evening.utf8), into: store, settings: settings(recordingDays: 0))
        #expect(off.visits == 3 && off.batches == 0)
        #expect(try store.stats().visits == 0)
    }

    @Test func theBundledSampleEveningReplays() throws {
        let sample = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/sample-sightings.csv")
        let bytes = try #require(FileManager.default.contents(atPath: sample.path))
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try DiaryReplay.replay(csv: Array(bytes), into: store, settings: settings())
        #expect(summary.sightings > 1000)
        #expect(summary.walkPasts >= 5)
        #expect(summary.visits >= 20)
        let visits = try store.visits()
        #expect(visits.contains { $0.kind == .gaen })
        // Someone stepped out for ten minutes: two visits of the same payload.
        let byPayload = Dictionary(grouping: visits, by: \.payload)
        #expect(byPayload.values.contains { $0.count == 2 })
        #expect(visits.contains { $0.checkOut! - $0.checkIn >= 3600 })
    }
}
