import Foundation
import GRDB
import Testing
@testable import VenueDiary

/// The diary as the outbox of replication (schema v4): every write to a visit renumbers it, and
/// the changes above an acknowledgement are what a node sends to its venue hub.
@Suite struct DiaryOutboxTests {
    let dir: TemporaryDirectory
    let path: String
    init() throws {
        dir = try TemporaryDirectory()
        path = dir.path("diary.sqlite")
    }

    let t0 = 1_795_197_600.0

    @Test func checkInCheckpointAndCheckOutEachGiveTheVisitANewHigherChange() throws {
        let store = try DiaryStore(path: path)
        let policy = FlushPolicy(interval: 60, maxPendingChanges: 10_000, checkInsWithin: 0)
        var diary = try VenueDiary(store: store, settings: settings(), now: t0, policy: policy)
        let key = diary.key(for: .herald, payload: heraldPayload(1))
        var seen: [Int64] = []
        var states: [Visit] = []
        var now = t0
        while now <= t0 + 900 {
            if now <= t0 + 500 { diary.record(key, time: now, rssi: -60) }
            _ = try diary.tick(now: now)
            let changes = try store.changes(after: seen.last ?? 0, limit: 10)
            for (change, visit) in changes {
                seen.append(change)
                states.append(visit)
            }
            now += 5
        }
        // Checked in at t0 + 125, checkpoints every minute while open, checked out after t0 + 800.
        #expect(seen.count >= 5)
        #expect(seen == seen.sorted() && Set(seen).count == seen.count)
        #expect(states.first?.checkOut == nil && states.first?.checkIn == t0)
        #expect(states.last?.checkOut == t0 + 500)
        // Checkpoints carry the open visit's progress.
        let lastSeens = states.map(\.lastSeen)
        #expect(lastSeens == lastSeens.sorted() && lastSeens.first! < lastSeens.last!)
        // Only the latest state remains to send: one visit, one change.
        #expect(try store.changes(after: 0, limit: 10).map(\.change) == [seen.last!])
        #expect(try store.lastChange() == seen.last!)
        #expect(try store.backlog(after: 0) == 1 && store.backlog(after: seen.last!) == 0)
    }

    @Test func aPurgedVisitLeavesTheOutboxAndNumbersAreNeverReused() throws {
        let store = try DiaryStore(path: path)
        let old = Visit(kind: .herald, payload: heraldPayload(1), checkIn: 0, lastSeen: 60, checkOut: 60, samples: 1, rssiMax: -50, rssiSum: -50)
        let recent = Visit(kind: .herald, payload: heraldPayload(2), checkIn: t0, lastSeen: t0 + 60, checkOut: t0 + 60, samples: 1, rssiMax: -50, rssiSum: -50)
        try store.save([old, recent])
        #expect(try store.changes(after: 0, limit: 10).map(\.change) == [1, 2])
        #expect(try store.purge(now: t0 + 100, recordingDays: 14) == 1)
        #expect(try store.changes(after: 0, limit: 10).map { $0.visit.payload } == [heraldPayload(2)])
        try store.save([Visit(kind: .herald, payload: heraldPayload(3), checkIn: t0 + 5, lastSeen: t0 + 70, checkOut: t0 + 70, samples: 1, rssiMax: -50, rssiSum: -50)])
        #expect(try store.changes(after: 0, limit: 10).map(\.change) == [2, 3])
        #expect(try store.changes(after: 2, limit: 10).map(\.change) == [3])
        #expect(try store.changes(after: 0, limit: 1).map(\.change) == [2])
    }

    @Test func everyDiaryHasItsOwnIdAndKeepsIt() throws {
        let first = try DiaryStore(path: path).diaryID()
        let second = try DiaryStore(path: dir.path("other.sqlite")).diaryID()
        #expect(first.count == 32 && second.count == 32 && first != second)
        #expect(try DiaryStore(path: path).diaryID() == first)
        #expect(try DiaryStore(path: path, readOnly: true).diaryID() == first)
    }

    @Test func theHubsAcknowledgementIsKept() throws {
        let store = try DiaryStore(path: path)
        #expect(try store.replicationAck() == nil)
        try store.saveReplicationAck(ReplicationAck(diary: "d", acked: 5, at: 10))
        try store.saveReplicationAck(ReplicationAck(diary: "d", acked: 9, at: 20))
        #expect(try DiaryStore(path: path).replicationAck() == ReplicationAck(diary: "d", acked: 9, at: 20))
    }

    @Test func aVersion3DiaryIsNumberedInVisitOrderWhenMigrated() throws {
        do {
            let queue = try DatabaseQueue(path: path)
            try DiarySchema.migrator.migrate(queue, upTo: "v3 gaen metadata")
            try queue.write { db in
                for (id, checkIn) in [(7, 100.0), (3, 50.0)] {
                    try db.execute(
                        sql: "INSERT INTO visit (id, kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum) VALUES (?, 'herald', x'01', ?, ?, ?, 1, -50, -50)",
                        arguments: [id, checkIn, checkIn + 60, checkIn + 60])
                }
            }
            try queue.close()
        }
        let store = try DiaryStore(path: path)
        #expect(try store.changes(after: 0, limit: 10).map { $0.visit.id } == [3, 7])
        #expect(try store.diaryID().count == 32)
    }

    @Test func aSalvagedDiaryKeepsItsIdAndSendsEveryVisitAgain() throws {
        let store = try DiaryStore(path: path)
        try store.save((1...3).map { Visit(kind: .herald, payload: heraldPayload($0), checkIn: t0 + Double($0), lastSeen: t0 + 60, checkOut: t0 + 60, samples: 1, rssiMax: -50, rssiSum: -50) })
        let id = try store.diaryID()
        let last = try store.lastChange()
        let rescued = dir.path("rescued.sqlite")
        _ = try DiaryRepair.salvage(from: path, to: rescued)
        let copy = try DiaryStore(path: rescued)
        #expect(try copy.diaryID() == id)
        let changes = try copy.changes(after: last, limit: 10)
        let all = try copy.changes(after: 0, limit: 10).map(\.change)
        #expect(all == [4, 5, 6], "last \(last)")
        #expect(changes.count == 3 && changes.allSatisfy { $0.change > last })
    }
}
