import Foundation
import GRDB

/// The statements on the write path, looked up in the connection's statement cache once per
/// transaction (not once per visit: the lookup hashes the SQL text). They are static SQL with a
/// fixed number of arguments, so they bind with GRDB's `setUncheckedArguments`, its documented
/// fast path.
struct VisitStatements {
    private let db: Database
    private let insert: Statement
    private let find: Statement
    private let progress: Statement
    private let close: Statement
    private let rewrite: Statement

    init(_ db: Database) throws {
        self.db = db
        // Inserts a visit, or updates the stored visit with the same identity unless that one
        // already has more samples (so replaying a file again, or after a crash, converges on the
        // complete visit instead of duplicating or shortening it).
        insert = try db.cachedStatement(sql: """
            INSERT INTO visit (kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (kind, payload, check_in) DO UPDATE SET
                last_seen = excluded.last_seen, check_out = excluded.check_out, samples = excluded.samples,
                rssi_max = excluded.rssi_max, rssi_sum = excluded.rssi_sum
            WHERE excluded.samples >= visit.samples
            RETURNING id
            """)
        find = try db.cachedStatement(sql: "SELECT id FROM visit WHERE kind = ? AND payload = ? AND check_in = ?")
        // An open visit's refresh touches no indexed column (the common case: every 30 s for
        // every present phone); closing sets check_out; only a check-in moved earlier by late
        // attribution rewrites the identity.
        progress = try db.cachedStatement(sql: """
            UPDATE visit SET last_seen = ?, samples = ?, rssi_max = ?, rssi_sum = ?
            WHERE id = ? AND samples <= ?
            """)
        close = try db.cachedStatement(sql: """
            UPDATE visit SET last_seen = ?, check_out = ?, samples = ?, rssi_max = ?, rssi_sum = ?
            WHERE id = ? AND samples <= ?
            """)
        rewrite = try db.cachedStatement(sql: """
            UPDATE OR REPLACE visit SET check_in = ?, last_seen = ?, check_out = ?, samples = ?, rssi_max = ?, rssi_sum = ?
            WHERE id = ? AND samples <= ?
            """)
    }

    /// Inserts or merges a visit by identity; returns its row.
    func upsert(_ visit: Visit) throws -> StoredVisit {
        let payload = Data(visit.payload)
        insert.setUncheckedArguments([
            visit.kind.rawValue, payload, visit.checkIn, visit.lastSeen, visit.checkOut,
            visit.samples, visit.rssiMax, visit.rssiSum,
        ])
        if let id = try Int64.fetchOne(insert) { return StoredVisit(id: id, checkIn: visit.checkIn) }
        find.setUncheckedArguments([visit.kind.rawValue, payload, visit.checkIn])
        guard let id = try Int64.fetchOne(find) else {
            throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "upserted visit not found")
        }
        return StoredVisit(id: id, checkIn: visit.checkIn)
    }

    /// Updates a stored visit in place, setting only what changed. Falls back to ``upsert(_:)``
    /// when the row is gone or already holds more samples.
    func update(_ row: StoredVisit, to visit: Visit) throws -> StoredVisit {
        let statement: Statement
        if visit.checkIn != row.checkIn {
            statement = rewrite
            statement.setUncheckedArguments([
                visit.checkIn, visit.lastSeen, visit.checkOut, visit.samples, visit.rssiMax, visit.rssiSum, row.id, visit.samples,
            ])
        } else if let checkOut = visit.checkOut {
            statement = close
            statement.setUncheckedArguments([visit.lastSeen, checkOut, visit.samples, visit.rssiMax, visit.rssiSum, row.id, visit.samples])
        } else {
            statement = progress
            statement.setUncheckedArguments([visit.lastSeen, visit.samples, visit.rssiMax, visit.rssiSum, row.id, visit.samples])
        }
        try statement.execute()
        if db.changesCount > 0 { return StoredVisit(id: row.id, checkIn: visit.checkIn) }
        return try upsert(visit)
    }

    /// Closes a stored open visit at its last sighting (recovery after a restart).
    static func closeAtLastSighting(id: Int64, _ db: Database) throws {
        let close = try db.cachedStatement(sql: "UPDATE visit SET check_out = last_seen WHERE id = ? AND check_out IS NULL")
        try close.execute(arguments: [id])
    }
}

/// Where an open visit is stored: its row, and the check-in that row holds.
struct StoredVisit: Equatable {
    var id: Int64
    var checkIn: Double
}

/// Writes tracker changes to the diary, a batch per transaction. It remembers the row of every
/// open checked-in visit, so updates address the row even after its check-in moved.
struct DiaryWriter {
    let store: DiaryStore
    private(set) var rows: [VisitKey: StoredVisit] = [:]
    /// Transactions committed.
    private(set) var batches = 0

    init(store: DiaryStore) {
        self.store = store
    }

    /// Remembers the row of a visit resumed after a restart.
    mutating func resumed(_ key: VisitKey, _ visit: StoredVisit) {
        rows[key] = visit
    }

    /// Applies changes in order in one transaction. On failure nothing is applied, here or in
    /// the file, and the caller may retry with the same changes.
    mutating func apply(_ changes: [VisitChange]) throws {
        guard !changes.isEmpty else { return }
        let before = rows
        rows = try store.database.write { db in
            let statements = try VisitStatements(db)
            var rows = before
            for change in changes {
                let visit = change.visit
                switch change.event {
                case .checkedIn:
                    rows[change.key] = try statements.upsert(visit)
                case .updated:
                    if let row = rows[change.key] {
                        rows[change.key] = try statements.update(row, to: visit)
                    } else {
                        rows[change.key] = try statements.upsert(visit)
                    }
                case .checkedOut:
                    if let row = rows.removeValue(forKey: change.key) {
                        _ = try statements.update(row, to: visit)
                    } else {
                        _ = try statements.upsert(visit)
                    }
                case .walkPast:
                    break
                }
            }
            return rows
        }
        batches += 1
    }
}
