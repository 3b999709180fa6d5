import GRDB

/// The diary's file format. Migrations are frozen once shipped: never edit one, add the next.
/// They use string table and column names, never app types, so old migrations keep their meaning.
enum DiarySchema {
    /// `PRAGMA application_id` of every venue diary ("VBDY"): tells our files from other SQLite files.
    static let applicationID: Int32 = 0x5642_4459
    /// `PRAGMA user_version` after the last migration this build knows.
    static let version = 3

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 visit") { db in
            try db.create(table: "visit") { t in
                // AUTOINCREMENT: a purged visit's id is never reused, so export ids stay unique.
                t.autoIncrementedPrimaryKey("id")
                t.column("kind", .text).notNull()
                t.column("payload", .blob).notNull()
                t.column("check_in", .double).notNull()
                t.column("last_seen", .double).notNull()
                t.column("check_out", .double)
                t.column("samples", .integer).notNull()
                t.column("rssi_max", .integer).notNull()
                t.column("rssi_sum", .integer).notNull()
            }
            // One row per visit identity: replaying a file twice updates instead of duplicating.
            try db.create(index: "visit_identity", on: "visit", columns: ["kind", "payload", "check_in"], unique: true)
            try db.create(index: "visit_check_in", on: "visit", columns: ["check_in"])
            // Retention deletes by check-out; recovery finds open visits (check_out IS NULL).
            try db.create(index: "visit_check_out", on: "visit", columns: ["check_out"])
            try db.execute(sql: "PRAGMA application_id = 1447183449")
            try db.execute(sql: "PRAGMA user_version = 1")
        }
        // Fewer pages written per commit (an SD card wears by the page), and clock awareness.
        // - The progress of open visits (last sighting, samples, RSSI sums) moves to a narrow
        //   table of its own: refreshing 350 open visits rewrites a few pages of ~40-byte rows
        //   instead of every page that holds a 200-byte visit row. A `visit` row is written at
        //   check-in and at check-out; its own progress columns hold the state as of its last
        //   write, and a `progress` row, while the visit is open, the newer state.
        // - No unique identity index: its 129-byte payload keys scattered every check-in over
        //   random pages. Identity lookups (replaying a file again) go through `visit_check_in`,
        //   which grows at its end. Retention scans by check-out once an hour (no index).
        // - `clock_boot`/`clock_offset`: set on visits recorded while the system clock was not
        //   synchronised (the Pi has no real-time clock): the boot (`/proc/sys/kernel/random/
        //   boot_id`) and the clock's `wall − CLOCK_BOOTTIME` then. When that boot's clock
        //   synchronises, the visit's times are corrected by the step and both are cleared; a
        //   visit still carrying them could not be corrected and exports say so.
        migrator.registerMigration("v2 progress and clock") { db in
            try db.execute(sql: "DROP INDEX visit_identity")
            try db.execute(sql: "DROP INDEX visit_check_out")
            try db.execute(sql: "ALTER TABLE visit ADD COLUMN clock_boot TEXT")
            try db.execute(sql: "ALTER TABLE visit ADD COLUMN clock_offset REAL")
            try db.execute(sql: "CREATE INDEX visit_clock_boot ON visit(clock_boot) WHERE clock_boot IS NOT NULL")
            try db.execute(sql: """
                CREATE TABLE progress (
                    visit INTEGER PRIMARY KEY,
                    last_seen REAL NOT NULL,
                    samples INTEGER NOT NULL,
                    rssi_max INTEGER NOT NULL,
                    rssi_sum INTEGER NOT NULL
                )
                """)
            try db.execute(sql: "PRAGMA user_version = 2")
        }
        // The 4 bytes of Associated Encrypted Metadata an Exposure Notification phone sends with
        // its rolling proximity identifier (kind `gaen`): with the diagnosis key they decrypt to
        // the phone's transmit power (`exposure check`). NULL for other kinds and older visits.
        migrator.registerMigration("v3 gaen metadata") { db in
            try db.execute(sql: "ALTER TABLE visit ADD COLUMN metadata BLOB")
            try db.execute(sql: "PRAGMA user_version = 3")
        }
        return migrator
    }
}

/// A visit as stored: its `visit` row with the newer progress of an open visit laid over it.
/// Rows are decoded by hand rather than through Codable: exports stream a million rows, where
/// Codable decoding costs three times the Row path.
enum VisitRow {
    /// The columns every visit query selects, in the order ``visit(_:)`` and the export read.
    static let selection = """
        v.id, v.kind, v.payload, v.check_in, coalesce(p.last_seen, v.last_seen), v.check_out,
        coalesce(p.samples, v.samples), coalesce(p.rssi_max, v.rssi_max), coalesce(p.rssi_sum, v.rssi_sum),
        v.clock_boot, v.metadata
        """
    static let from = "visit v LEFT JOIN progress p ON p.visit = v.id"

    static func visit(_ row: Row) throws -> Visit {
        let id: Int64 = row[0]
        let kindText: String = row[1]
        guard let kind = PayloadKind(rawValue: kindText) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "visit \(id) has unknown kind '\(kindText)'")
        }
        let payload = try row.withUnsafeData(atIndex: 2) { data in data.map { [UInt8]($0) } ?? [] }
        let metadata = try row.withUnsafeData(atIndex: 10) { data in data.map { [UInt8]($0) } }
        return Visit(
            id: id, kind: kind, payload: payload, checkIn: row[3], lastSeen: row[4], checkOut: row[5],
            samples: row[6], rssiMax: row[7], rssiSum: row[8], clockUncorrected: !row.hasNull(atIndex: 9), metadata: metadata)
    }
}

extension VisitWindow {
    /// Visits overlapping the window: checked in by its end and not checked out before its start
    /// (an open visit lasts until now), oldest check-in first.
    var request: SQLRequest<Row> {
        var conditions: [String] = []
        var arguments = StatementArguments()
        if let to {
            conditions.append("v.check_in <= ?")
            arguments += [to]
        }
        if let from {
            conditions.append("(v.check_out IS NULL OR v.check_out >= ?)")
            arguments += [from]
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return SQLRequest(
            sql: "SELECT \(VisitRow.selection) FROM \(VisitRow.from)\(filter) ORDER BY v.check_in, v.id", arguments: arguments)
    }

    /// The number of visits in the window whose times could not be corrected to a synchronised
    /// clock.
    var uncorrectedRequest: SQLRequest<Int> {
        var sql = "SELECT count(*) FROM visit v WHERE v.clock_boot IS NOT NULL"
        var arguments = StatementArguments()
        if let to {
            sql += " AND v.check_in <= ?"
            arguments += [to]
        }
        if let from {
            sql += " AND (v.check_out IS NULL OR v.check_out >= ?)"
            arguments += [from]
        }
        return SQLRequest(sql: sql, arguments: arguments)
    }
}
