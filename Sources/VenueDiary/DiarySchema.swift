import GRDB

/// The diary's file format. Migrations are frozen once shipped: never edit one, add the next.
/// They use string table and column names, never app types, so old migrations keep their meaning.
enum DiarySchema {
    /// `PRAGMA application_id` of every venue diary ("VBDY"): tells our files from other SQLite files.
    static let applicationID: Int32 = 0x5642_4459
    /// `PRAGMA user_version` after the last migration this build knows.
    static let version = 1

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
        return migrator
    }
}

/// The `visit` table as GRDB sees it. Rows are decoded by hand rather than through Codable:
/// exports stream a million rows, where Codable decoding costs three times the Row path.
struct VisitRow: FetchableRecord, TableRecord {
    static let databaseTableName = "visit"

    enum Columns {
        static let id = Column("id")
        static let kind = Column("kind")
        static let payload = Column("payload")
        static let checkIn = Column("check_in")
        static let lastSeen = Column("last_seen")
        static let checkOut = Column("check_out")
        static let samples = Column("samples")
        static let rssiMax = Column("rssi_max")
        static let rssiSum = Column("rssi_sum")
    }

    /// The selection order `init(row:)` reads by index.
    static var databaseSelection: [any SQLSelectable] {
        [
            Columns.id, Columns.kind, Columns.payload, Columns.checkIn, Columns.lastSeen, Columns.checkOut,
            Columns.samples, Columns.rssiMax, Columns.rssiSum,
        ]
    }

    var visit: Visit

    init(row: Row) throws {
        let id: Int64 = row[0]
        let kindText: String = row[1]
        guard let kind = PayloadKind(rawValue: kindText) else {
            throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "visit \(id) has unknown kind '\(kindText)'")
        }
        let payload = try row.withUnsafeData(atIndex: 2) { data in data.map { [UInt8]($0) } ?? [] }
        visit = Visit(
            id: id, kind: kind, payload: payload, checkIn: row[3], lastSeen: row[4], checkOut: row[5],
            samples: row[6], rssiMax: row[7], rssiSum: row[8])
    }
}

extension VisitWindow {
    /// Visits overlapping the window: checked in by its end and not checked out before its start
    /// (an open visit lasts until now), oldest check-in first.
    var request: QueryInterfaceRequest<VisitRow> {
        var request = VisitRow.all()
        if let to { request = request.filter(VisitRow.Columns.checkIn <= to) }
        if let from { request = request.filter(VisitRow.Columns.checkOut == nil || VisitRow.Columns.checkOut >= from) }
        return request.order(VisitRow.Columns.checkIn, VisitRow.Columns.id)
    }
}
