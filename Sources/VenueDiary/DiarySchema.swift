import Foundation
import GRDB
import Sightings

/// The diary's file format. Migrations are frozen once shipped: never edit one, add the next.
/// They use string table and column names, never app types, so old migrations keep their meaning.
enum DiarySchema {
    /// `PRAGMA application_id` of every venue diary ("VBDY"): tells our files from other SQLite files.
    static let applicationID: Int32 = 0x5642_4459
    /// `PRAGMA user_version` after the last migration this build knows.
    static let version = 5

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
        // The diary as the outbox of replication to a venue hub (docs/venue.md).
        // - `diary_info.id`: random, given once when the diary is made (or first migrated), so a
        //   re-imaged card's new diary never collides at the hub with the visits of its old one.
        // - `visit_change`: one row per visit, numbered by its latest write. Triggers renumber a
        //   visit on every write to its `visit` or `progress` row (check-in, checkpoint of an open
        //   visit, check-out, clock correction), so no writer can forget to; AUTOINCREMENT never
        //   reuses a number, so the numbers only grow. (Delete then insert: a trigger's own
        //   `OR REPLACE` would give way to the writing statement's conflict clause.) The hub acknowledges "every change up to
        //   N"; what is above N is the backlog.
        // - `replication_ack`: the hub's last acknowledgement, for `diary stats` and restarts.
        migrator.registerMigration("v4 replication") { db in
            try db.execute(sql: """
                CREATE TABLE diary_info (id TEXT NOT NULL);
                INSERT INTO diary_info (id) VALUES (lower(hex(randomblob(16))));
                CREATE TABLE visit_change (change INTEGER PRIMARY KEY AUTOINCREMENT, visit INTEGER NOT NULL UNIQUE);
                INSERT INTO visit_change (visit) SELECT id FROM visit ORDER BY id;
                CREATE TRIGGER visit_change_insert AFTER INSERT ON visit BEGIN
                    DELETE FROM visit_change WHERE visit = NEW.id;
                    INSERT INTO visit_change (visit) VALUES (NEW.id);
                END;
                CREATE TRIGGER visit_change_update AFTER UPDATE ON visit BEGIN
                    DELETE FROM visit_change WHERE visit = NEW.id;
                    INSERT INTO visit_change (visit) VALUES (NEW.id);
                END;
                CREATE TRIGGER visit_change_progress_insert AFTER INSERT ON progress BEGIN
                    DELETE FROM visit_change WHERE visit = NEW.visit;
                    INSERT INTO visit_change (visit) VALUES (NEW.visit);
                END;
                CREATE TRIGGER visit_change_progress_update AFTER UPDATE ON progress BEGIN
                    DELETE FROM visit_change WHERE visit = NEW.visit;
                    INSERT INTO visit_change (visit) VALUES (NEW.visit);
                END;
                CREATE TRIGGER visit_change_delete AFTER DELETE ON visit BEGIN
                    DELETE FROM visit_change WHERE visit = OLD.id;
                END;
                CREATE TABLE replication_ack (diary TEXT NOT NULL, acked INTEGER NOT NULL, at REAL NOT NULL);
                PRAGMA user_version = 4;
                """)
        }
        // - `visit.shared`: 1 when the visit's identity was carried by two or more devices at
        //   once (``Visit/sharedIdentity``): the visit may be several people. Visits recorded
        //   before have 0 (not looked for then).
        migrator.registerMigration("v5 shared identity") { db in
            try db.execute(sql: """
                ALTER TABLE visit ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 5;
                """)
        }
        return migrator
    }
}

/// A visit as stored: its `visit` row with the newer progress of an open visit laid over it.
///
/// Every visit query selects ``selection``, whose columns are named as in the `visit` table,
/// and reads its rows by those names: ``VisitColumns`` looks each name up once per statement and
/// rows are then read at the indexes found. A name lookup per row and column (`row["check_in"]`,
/// a dictionary lookup), or Codable decoding, would cost measurably more on an export that
/// streams a million rows.
struct VisitColumns {
    /// The columns every visit query selects.
    static let selection = """
        v.id AS id, v.kind AS kind, v.payload AS payload, v.check_in AS check_in,
        coalesce(p.last_seen, v.last_seen) AS last_seen, v.check_out AS check_out,
        coalesce(p.samples, v.samples) AS samples, coalesce(p.rssi_max, v.rssi_max) AS rssi_max,
        coalesce(p.rssi_sum, v.rssi_sum) AS rssi_sum, v.clock_boot AS clock_boot, v.metadata AS metadata,
        v.shared AS shared
        """
    static let from = "visit v LEFT JOIN progress p ON p.visit = v.id"

    let id, kind, payload, checkIn, lastSeen, checkOut, samples, rssiMax, rssiSum, clockBoot, metadata, shared: Int
    /// Selected only by the queries that need it (recovering open visits).
    let clockOffset: Int?

    init(_ statement: Statement) throws {
        let index = statement.requiredIndex(ofColumn:)
        id = try index("id")
        kind = try index("kind")
        payload = try index("payload")
        checkIn = try index("check_in")
        lastSeen = try index("last_seen")
        checkOut = try index("check_out")
        samples = try index("samples")
        rssiMax = try index("rssi_max")
        rssiSum = try index("rssi_sum")
        clockBoot = try index("clock_boot")
        metadata = try index("metadata")
        shared = try index("shared")
        clockOffset = statement.index(ofColumn: "clock_offset")
    }

    /// Runs `SELECT` ``selection`` (and `extraColumns`, each named) `FROM` ``from`` `clauses`
    /// and hands `body` each row in turn. A row is valid only during its call.
    static func forEach(
        _ db: Database, extraColumns: String = "", _ clauses: String, arguments: StatementArguments = [],
        _ body: (VisitRow) throws -> Void
    ) throws {
        let statement = try db.makeStatement(sql: "SELECT \(selection)\(extraColumns) FROM \(from) \(clauses)")
        let columns = try VisitColumns(statement)
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try rows.next() {
            try body(VisitRow(row: row, columns: columns))
        }
    }
}

/// One row of a visit query, read by column name (see ``VisitColumns``). Its accessors are
/// inlined: the export reads every field of a million rows.
struct VisitRow {
    let row: Row
    let columns: VisitColumns

    @inline(__always) var id: Int64 { row[columns.id] }
    /// The stored kind's raw text (``visit()`` checks it).
    @inline(__always) var kind: String { row[columns.kind] }
    @inline(__always) var checkIn: Double { row[columns.checkIn] }
    @inline(__always) var lastSeen: Double { row[columns.lastSeen] }
    @inline(__always) var checkOut: Double? { row[columns.checkOut] }
    @inline(__always) var samples: Int { row[columns.samples] }
    @inline(__always) var rssiMax: Int { row[columns.rssiMax] }
    @inline(__always) var rssiSum: Int { row[columns.rssiSum] }
    /// Whether the visit still carries the unsynchronised clock it was recorded on; only
    /// whether it is set, no String (a million-visit export asks for every row).
    @inline(__always) var clockUncorrected: Bool { !row.hasNull(atIndex: columns.clockBoot) }
    /// Whether two or more devices carried the visit's identity at once (``Visit/sharedIdentity``).
    @inline(__always) var sharedIdentity: Bool { row[columns.shared] != 0 as Int }
    /// That clock's boot id.
    @inline(__always) var clockBoot: String? { row[columns.clockBoot] }
    /// That clock's `wall − CLOCK_BOOTTIME`; nil when the query did not select `clock_offset`.
    @inline(__always) var clockOffset: Double? { columns.clockOffset.flatMap { row[$0] } }

    /// The payload's bytes where SQLite holds them, without copying.
    @inline(__always)
    func withPayload<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try row.withUnsafeData(atIndex: columns.payload) { data in try (data ?? Data()).withUnsafeBytes(body) }
    }

    func visit() throws -> Visit {
        let id = self.id
        let kindText = kind
        guard let kind = PayloadKind(rawValue: kindText) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "visit \(id) has unknown kind '\(kindText)'")
        }
        let payload = try row.withUnsafeData(atIndex: columns.payload) { data in data.map { [UInt8]($0) } ?? [] }
        let metadata = try row.withUnsafeData(atIndex: columns.metadata) { data in data.map { [UInt8]($0) } }
        return Visit(
            id: id, kind: kind, payload: payload, checkIn: checkIn, lastSeen: lastSeen, checkOut: checkOut,
            samples: samples, rssiMax: rssiMax, rssiSum: rssiSum, clockUncorrected: clockUncorrected, metadata: metadata,
            sharedIdentity: sharedIdentity)
    }
}

extension VisitWindow {
    /// The clauses of a visit query (``VisitColumns/forEach(_:extraColumns:_:arguments:_:)``)
    /// for the visits overlapping the window: checked in by its end and not checked out before
    /// its start (an open visit lasts until now), oldest check-in first.
    var clauses: (sql: String, arguments: StatementArguments) {
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
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ") + " "
        return (filter + "ORDER BY v.check_in, v.id", arguments)
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

extension Statement {
    /// The index of the column named `name` in this statement's rows: looked up once, so that
    /// rows are read by name at the cost of reading them by position.
    func requiredIndex(ofColumn name: String) throws -> Int {
        guard let index = index(ofColumn: name) else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "query selects no column \(name)", sql: sql)
        }
        return index
    }
}
