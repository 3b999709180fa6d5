import Foundation
import Testing
import VenueDiary
@testable import VenueNode

/// `diary replay`'s guarantees: what it records, in time order, all or nothing on bad input, the
/// same visits however often it runs, in batches it reports.
@Suite struct SightingsReplayTests {
    /// The GAEN phone of ReplayTestSupport: a 16-byte identifier starting cc03.
    static let gaenCC03: [UInt8] = [0xCC, 0x03] + Array(repeating: 0, count: 14)

    let dir: ReplayDirectory
    init() throws { dir = try ReplayDirectory() }

    let t0 = Replayed.t0

    func replay(_ text: String, into store: DiaryStore, _ settings: DiarySettings = Replayed.settings()) throws -> ReplaySummary {
        try SightingsReplay.replay(csv: Array(text.utf8), into: store, settings: settings, now: Replayed.soonAfter)
    }

    @Test func aReplayWritesTheCheckedInVisitsAndClosesThemAtTheEnd() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try replay(Replayed.evening, into: store)
        #expect(summary.sightings == 61 + 6 + 80)
        #expect(summary.visits == 3 && summary.walkPasts == 1 && summary.batches >= 1)
        let visits = try store.visits()
        #expect(visits.map(\.payload) == [[0xAA, 0x01], Self.gaenCC03, Self.gaenCC03])
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
        let summary = try replay(rows.joined(separator: "\n"), into: store, Replayed.settings(minRSSI: -50))
        #expect(summary.visits == 2 && summary.ignoredWeak == 61)
        let visits = try store.visits().sorted { $0.payload.lexicographicallyPrecedes($1.payload) }
        #expect(visits.map(\.payload) == [[0xAA, 0x01], [0xBB, 0x02]])
        #expect(visits.map(\.samples) == [0, 1])
        #expect(visits[1].rssiMax == -40 && visits[1].rssiSum == -40)
        #expect(visits.allSatisfy { $0.checkIn == t0 && $0.checkOut == t0 + 600 })
    }

    /// A `gaen` payload of 20 bytes is the RPI and its 4 bytes of metadata: the visit's identity
    /// stays the RPI (16-byte rows of the same RPI join the same visit) and the metadata is kept,
    /// even when the first rows of the RPI came without it (the pipeline's key cache hands the
    /// first metadata it sees to the diary).
    @Test func gaenMetadataIsKeptBesideTheIdentifier() throws {
        let rpi = "8be6cd371c5c891604bfbe49df845096"
        var rows = ["time,kind,payload,rssi"]
        for t in stride(from: 0, through: 300, by: 30) {
            rows.append("\(Int(t0) + t),gaen,\(rpi)\(t == 0 || t == 60 ? "" : "72033874"),-60")
            rows.append("\(Int(t0) + t),gaen,0102030405060708090a0b0c0d0e0f10,-70")  // no metadata heard
            rows.append("\(Int(t0) + t),herald,0102030405060708090a0b0c0d0e0f1011121314,-70")  // other kinds: as is
        }
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try replay(rows.joined(separator: "\n"), into: store)
        #expect(summary.visits == 3)
        let visits = try store.visits()
        let gaen = try #require(visits.first { $0.payload.count == 16 && $0.payload.first == 0x8b })
        #expect(gaen.samples == 11)
        #expect(gaen.metadata == [0x72, 0x03, 0x38, 0x74])
        #expect(visits.first { $0.payload.first == 0x01 && $0.kind == .gaen }?.metadata == nil)
        #expect(visits.first { $0.kind == .herald }?.payload.count == 20)
    }

    @Test func replayingTheSameFileTwiceDoesNotDuplicateVisits() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        _ = try replay(Replayed.evening, into: store)
        let first = try store.visits()
        _ = try replay(Replayed.evening, into: store)
        #expect(try store.visits() == first)
    }

    @Test func unsortedRowsAreReplayedInTimeOrder() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        var lines = Replayed.evening.split(separator: "\n").map(String.init)
        let header = lines.removeFirst()
        let summary = try replay(([header] + lines.reversed()).joined(separator: "\n"), into: store)
        #expect(summary.visits == 3 && summary.walkPasts == 1)
        #expect(try store.visits().map(\.checkIn) == [t0, t0, t0 + 1215])
    }

    @Test func aMalformedRowChangesNothing() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        _ = try replay(Replayed.evening, into: store)
        let before = try store.visits()
        var rows = Replayed.evening.split(separator: "\n").map(String.init)
        rows.append("\(Int(t0) + 4000),herald,dd04,-60")
        rows.append("\(Int(t0) + 4200),herald,dd04,-60")
        rows.insert("\(Int(t0) + 700),herald,dd04,loud", at: 100)
        #expect(throws: SightingsCSVError(line: 101, problem: "rssi 'loud' is not a whole number of dBm from -127 to 127")) {
            try replay(rows.joined(separator: "\n"), into: store)
        }
        #expect(try store.visits() == before)
    }

    /// Rows of Herald's all-zero contact identifier (every Herald phone from 2026-03-18) are
    /// counted, never one merged visit; a real identifier beside them is recorded.
    @Test func placeholderRowsAreCountedNotRecorded() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let placeholder: [UInt8] = [0x10, 0x3A, 0x03, 0x04, 0x00] + [UInt8](repeating: 0, count: 16)
        let real: [UInt8] = [0x10, 0x3A, 0x03, 0x04, 0x00] + (1...16).map { UInt8($0) }
        var sightings: [Sighting] = []
        for t in stride(from: 0.0, through: 600, by: 10) {
            sightings.append(Sighting(time: t0 + t, kind: .herald, payload: placeholder, rssi: -60))
            sightings.append(Sighting(time: t0 + t, kind: .herald, payload: real, rssi: -60))
        }
        let summary = try SightingsReplay.replay(sightings, into: store, settings: Replayed.settings(), now: Replayed.soonAfter)
        #expect(summary.placeholders == 61)
        #expect(summary.visits == 1)
        #expect(try store.visits().map(\.payload) == [real])
    }

    @Test func aLongReplayCommitsInBatchesAndReportsEach() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        var sightings: [Sighting] = []
        // Ids from 1: id 0 makes an all-zero payload, a placeholder that is never a visit.
        for phone in 1...50 {
            let arrive = Double(phone * 200)
            for t in stride(from: arrive, through: arrive + 600, by: 20) {
                sightings.append(Sighting(time: t0 + t, kind: .herald, payload: Replayed.heraldPayload(UInt32(phone)), rssi: -60))
            }
        }
        var reported: [Int] = []
        let policy = FlushPolicy(interval: 3600, maxPendingChanges: 10, checkInsWithin: 3600)
        let summary = try SightingsReplay.replay(
            sightings, into: store, settings: Replayed.settings(), policy: policy, now: Replayed.soonAfter
        ) { reported.append($0.batches) }
        #expect(summary.visits == 50)
        #expect(summary.batches >= 5)
        #expect(reported == Array(1...summary.batches))
        #expect(try store.stats().visits == 50)
    }

    @Test func minRSSIAndRecordingDaysApplyToReplays() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let quiet = try replay(Replayed.evening, into: store, Replayed.settings(minRSSI: -80))
        #expect(quiet.ignoredWeak == 6 && quiet.walkPasts == 0 && quiet.visits == 3)
        #expect(try store.stats().visits == 3)
        // recording_days = 0: nothing is written, and retention deletes what was (as the node's does).
        let off = try replay(Replayed.evening, into: store, Replayed.settings(recordingDays: 0))
        #expect(off.visits == 3 && off.batches == 0)
        #expect(try store.stats().visits == 0)
    }

    @Test func theBundledSampleEveningReplays() throws {
        let sample = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/sample-sightings.csv")
        let bytes = try #require(FileManager.default.contents(atPath: sample.path))
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try SightingsReplay.replay(csv: Array(bytes), into: store, settings: Replayed.settings(), now: 4_000_000_000)
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
