import Foundation
import GRDB

/// The statements on the write path, looked up in the connection's statement cache once per
/// transaction (not once per visit: the lookup hashes the SQL text). They are static SQL with a
/// fixed number of arguments, so they bind with GRDB's `setUncheckedArguments`, its documented
/// fast path.
///
/// Every write is guarded by the sample count, so replaying a file again (or after a crash)
/// converges on the complete visit instead of duplicating or shortening it: a stored visit with
/// more samples than the one being written is left alone.
struct VisitStatements {
    private let db: Database
    private let insert: Statement
    private let find: Statement
    /// `find`'s columns, looked up by name once.
    private let foundID: Int
    private let foundSamples: Int
    private let progress: Statement
    private let close: Statement
    private let dropProgress: Statement
    private let markShared: Statement
    private let clock: DiaryClock

    init(_ db: Database, clock: DiaryClock) throws {
        self.db = db
        self.clock = clock
        insert = try db.cachedStatement(sql: """
            INSERT INTO visit (kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum, clock_boot, clock_offset, metadata, shared)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        // Through `visit_check_in`, which grows at its end (few visits share a check-in second).
        find = try db.cachedStatement(sql: """
            SELECT v.id AS id, coalesce(p.samples, v.samples) AS samples FROM \(VisitColumns.from)
            WHERE v.check_in = ? AND v.kind = ? AND v.payload = ?
            """)
        foundID = try find.requiredIndex(ofColumn: "id")
        foundSamples = try find.requiredIndex(ofColumn: "samples")
        // An open visit's refresh: one narrow row, nothing indexed.
        progress = try db.cachedStatement(sql: """
            INSERT INTO progress (visit, last_seen, samples, rssi_max, rssi_sum)
            SELECT id, ?, ?, ?, ? FROM visit WHERE id = ? AND check_out IS NULL AND samples <= ?
            ON CONFLICT (visit) DO UPDATE SET
                last_seen = excluded.last_seen, samples = excluded.samples, rssi_max = excluded.rssi_max,
                rssi_sum = excluded.rssi_sum
            WHERE excluded.samples >= progress.samples
            """)
        // The whole visit row: at check-out, when late attribution moved a check-in, or when an
        // import brings a fuller copy of a stored visit.
        close = try db.cachedStatement(sql: """
            UPDATE visit SET check_in = ?, last_seen = ?, check_out = ?, samples = ?, rssi_max = ?, rssi_sum = ?,
                metadata = coalesce(metadata, ?), shared = max(shared, ?)
            WHERE id = ? AND samples <= ? AND coalesce((SELECT samples FROM progress WHERE visit = ?), 0) <= ?
            """)
        dropProgress = try db.cachedStatement(sql: "DELETE FROM progress WHERE visit = ?")
        // An open visit found shared: the mark is on the visit row (a progress row holds only
        // what changes on every refresh). Once per visit: the tracker never unmarks one.
        markShared = try db.cachedStatement(sql: "UPDATE visit SET shared = 1 WHERE id = ? AND shared = 0")
    }

    /// Inserts a visit, or merges it into the stored visit with the same identity (kind,
    /// payload, check-in) unless that one has more samples; returns its row.
    func upsert(_ visit: Visit) throws -> StoredVisit {
        let payload = Data(visit.payload)
        find.setUncheckedArguments([visit.checkIn, visit.kind.rawValue, payload])
        if let row = try Row.fetchOne(find) {
            let stored = StoredVisit(id: row[foundID], checkIn: visit.checkIn)
            let samples: Int = row[foundSamples]
            if visit.samples >= samples { try write(stored, visit) }
            return stored
        }
        var boot: String?
        var offset: Double?
        if case .unsynchronised(let bootID, let wallMinusBoot) = clock {
            boot = bootID
            offset = wallMinusBoot
        }
        insert.setUncheckedArguments([
            visit.kind.rawValue, payload, visit.checkIn, visit.lastSeen, visit.checkOut,
            visit.samples, visit.rssiMax, visit.rssiSum, boot, offset, visit.metadata.map { Data($0) }, visit.sharedIdentity,
        ])
        try insert.execute()
        return StoredVisit(id: db.lastInsertedRowID, checkIn: visit.checkIn)
    }

    /// Writes the newer state of a stored visit, setting only what changed: an open visit's
    /// progress row, or the visit row (and no progress) once it is closed or its check-in moved.
    /// Falls back to ``upsert(_:)`` when the row is gone or holds more samples.
    func update(_ row: StoredVisit, to visit: Visit) throws -> StoredVisit {
        let applied: Bool
        if visit.checkOut == nil && visit.checkIn == row.checkIn {
            progress.setUncheckedArguments([visit.lastSeen, visit.samples, visit.rssiMax, visit.rssiSum, row.id, visit.samples])
            try progress.execute()
            applied = db.changesCount > 0
            if applied, visit.sharedIdentity {
                markShared.setUncheckedArguments([row.id])
                try markShared.execute()
            }
        } else {
            applied = try write(row, visit)
        }
        if applied { return StoredVisit(id: row.id, checkIn: visit.checkIn) }
        return try upsert(visit)
    }

    /// The whole visit row, its progress row dropped; false when the guard kept the stored one.
    @discardableResult
    private func write(_ row: StoredVisit, _ visit: Visit) throws -> Bool {
        close.setUncheckedArguments([
            visit.checkIn, visit.lastSeen, visit.checkOut, visit.samples, visit.rssiMax, visit.rssiSum,
            visit.metadata.map { Data($0) }, visit.sharedIdentity, row.id, visit.samples, row.id, visit.samples,
        ])
        try close.execute()
        guard db.changesCount > 0 else { return false }
        dropProgress.setUncheckedArguments([row.id])
        try dropProgress.execute()
        return true
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
    /// The clock new visits are stamped with (see ``DiaryClock``).
    private(set) var clock: DiaryClock
    private(set) var rows: [VisitKey: StoredVisit] = [:]
    /// Transactions committed.
    private(set) var batches = 0

    init(store: DiaryStore, clock: DiaryClock) {
        self.store = store
        self.clock = clock
    }

    /// The wall clock can no longer be trusted (it stepped while synchronised): new visits are
    /// stamped with boot `bootID` and `wallMinusBoot`, as before a sync, until ``synchronise``.
    mutating func desynchronise(bootID: String, wallMinusBoot: Double) {
        clock = .unsynchronised(bootID: bootID, wallMinusBoot: wallMinusBoot)
    }

    /// Remembers the row of a visit resumed after a restart.
    mutating func resumed(_ key: VisitKey, _ visit: StoredVisit) {
        rows[key] = visit
    }

    /// Applies changes in order in one transaction. On failure nothing is applied, here or in
    /// the file, and the caller may retry with the same changes.
    mutating func apply(_ changes: [VisitChange]) throws {
        guard !changes.isEmpty else { return }
        let clock = clock
        let before = rows
        rows = try store.database.write { db in
            var rows = before
            try Self.apply(changes, to: &rows, db, clock: clock)
            return rows
        }
        batches += 1
    }

    /// The clock of boot `bootID` has been synchronised and its `wall − CLOCK_BOOTTIME` is now
    /// `wallMinusBoot`: in one transaction, writes `changes` (still stamped with the old clock),
    /// then adds each stored visit's step to the times of every visit of that boot and clears
    /// their marks; open visits' remembered check-ins move by `step` (the step this process
    /// measured). From then on new visits are unmarked. Returns the visits corrected and those
    /// of other boots left uncorrected.
    mutating func synchronise(
        bootID: String, wallMinusBoot: Double, step: Double, after changes: [VisitChange]
    ) throws -> (corrected: Int, uncorrectable: Int) {
        let clock = clock
        let before = rows
        let (rows, counts) = try store.database.write { db in
            var rows = before
            try Self.apply(changes, to: &rows, db, clock: clock)
            try db.execute(
                sql: """
                    UPDATE progress SET last_seen = last_seen + (?1 - (SELECT clock_offset FROM visit WHERE id = progress.visit))
                    WHERE visit IN (SELECT id FROM visit WHERE clock_boot = ?2)
                    """,
                arguments: [wallMinusBoot, bootID])
            try db.execute(
                sql: """
                    UPDATE visit SET check_in = check_in + (?1 - clock_offset), last_seen = last_seen + (?1 - clock_offset),
                        check_out = check_out + (?1 - clock_offset), clock_boot = NULL, clock_offset = NULL
                    WHERE clock_boot = ?2
                    """,
                arguments: [wallMinusBoot, bootID])
            let corrected = db.changesCount
            let uncorrectable = try Int.fetchOne(db, sql: "SELECT count(*) FROM visit WHERE clock_boot IS NOT NULL") ?? 0
            for key in rows.keys { rows[key]?.checkIn += step }
            return (rows, (corrected, uncorrectable))
        }
        self.rows = rows
        self.clock = .synchronised
        batches += 1
        return counts
    }

    private static func apply(_ changes: [VisitChange], to rows: inout [VisitKey: StoredVisit], _ db: Database, clock: DiaryClock) throws {
        guard !changes.isEmpty else { return }
        let statements = try VisitStatements(db, clock: clock)
        for change in changes {
            let visit = change.visit
            switch change.event {
            case .checkedIn, .reopened:
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
    }
}
