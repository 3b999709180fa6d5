import Foundation
import GRDB

/// The statements on the write path, cached per connection (prepared once, bound per visit).
enum VisitStatements {
    /// Inserts a visit, or updates the stored visit with the same identity unless that one
    /// already has more samples (so replaying a file again, or after a crash, converges on the
    /// complete visit instead of duplicating or shortening it). Returns the row id.
    static func upsert(_ visit: Visit, _ db: Database) throws -> Int64 {
        let payload = Data(visit.payload)
        let insert = try db.cachedStatement(sql: """
            INSERT INTO visit (kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (kind, payload, check_in) DO UPDATE SET
                last_seen = excluded.last_seen, check_out = excluded.check_out, samples = excluded.samples,
                rssi_max = excluded.rssi_max, rssi_sum = excluded.rssi_sum
            WHERE excluded.samples >= visit.samples
            RETURNING id
            """)
        let arguments: StatementArguments = [
            visit.kind.rawValue, payload, visit.checkIn, visit.lastSeen, visit.checkOut,
            visit.samples, visit.rssiMax, visit.rssiSum,
        ]
        if let id = try Int64.fetchOne(insert, arguments: arguments) { return id }
        let find = try db.cachedStatement(sql: "SELECT id FROM visit WHERE kind = ? AND payload = ? AND check_in = ?")
        guard let id = try Int64.fetchOne(find, arguments: [visit.kind.rawValue, payload, visit.checkIn]) else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "upserted visit not found")
        }
        return id
    }

    /// Updates a stored visit in place (its check-in may move earlier through late attribution).
    /// Falls back to ``upsert(_:_:)`` when the row is gone or holds more samples.
    static func update(id: Int64, to visit: Visit, _ db: Database) throws -> Int64 {
        let update = try db.cachedStatement(sql: """
            UPDATE OR REPLACE visit SET check_in = ?, last_seen = ?, check_out = ?, samples = ?, rssi_max = ?, rssi_sum = ?
            WHERE id = ? AND samples <= ?
            """)
        try update.execute(arguments: [
            visit.checkIn, visit.lastSeen, visit.checkOut, visit.samples, visit.rssiMax, visit.rssiSum, id, visit.samples,
        ])
        return db.changesCount > 0 ? id : try upsert(visit, db)
    }

    /// Closes a stored open visit at its last sighting.
    static func closeAtLastSighting(id: Int64, _ db: Database) throws {
        let close = try db.cachedStatement(sql: "UPDATE visit SET check_out = last_seen WHERE id = ? AND check_out IS NULL")
        try close.execute(arguments: [id])
    }
}

/// Writes tracker changes to the diary, a batch per transaction. It remembers the row id of
/// every open checked-in visit, so updates address the row even after its check-in moved.
struct DiaryWriter {
    let store: DiaryStore
    private(set) var rowIDs: [VisitKey: Int64] = [:]
    /// Transactions committed.
    private(set) var batches = 0

    init(store: DiaryStore) {
        self.store = store
    }

    /// Remembers the row of a visit resumed after a restart.
    mutating func resumed(_ key: VisitKey, id: Int64) {
        rowIDs[key] = id
    }

    /// Applies changes in order in one transaction. On failure nothing is applied, here or in
    /// the file, and the caller may retry with the same changes.
    mutating func apply(_ changes: [VisitChange]) throws {
        guard !changes.isEmpty else { return }
        let before = rowIDs
        rowIDs = try store.database.write { db in
            var ids = before
            for change in changes {
                switch change.event {
                case .checkedIn:
                    ids[change.key] = try VisitStatements.upsert(change.visit, db)
                case .updated:
                    if let id = ids[change.key] {
                        ids[change.key] = try VisitStatements.update(id: id, to: change.visit, db)
                    } else {
                        ids[change.key] = try VisitStatements.upsert(change.visit, db)
                    }
                case .checkedOut:
                    if let id = ids.removeValue(forKey: change.key) {
                        _ = try VisitStatements.update(id: id, to: change.visit, db)
                    } else {
                        _ = try VisitStatements.upsert(change.visit, db)
                    }
                case .walkPast:
                    break
                }
            }
            return ids
        }
        batches += 1
    }
}
