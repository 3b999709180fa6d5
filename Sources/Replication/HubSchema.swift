import Foundation
import GRDB

/// The venue hub's file format. Migrations are frozen once shipped: never edit one, add the
/// next. They use string table and column names, never app types, so old migrations keep their
/// meaning.
///
/// - `node_visit`: one row per visit of one node's diary, keyed by (node, diary, visit), holding
///   the state with the highest change number (`version`) received. `id` is the hub's own id
///   (AUTOINCREMENT: a purged row's id is never reused, so the ids of hub exports stay unique).
/// - `node_diary`: per (node, diary) the highest change up to which every change has been
///   committed (`acked`), and when the diary was first heard.
/// - `node`: each node's last message, whether it is online and whether its clock is
///   synchronised (NULL: never said); `node_gap` its offline periods (`end` NULL while it is
///   still offline).
enum HubSchema {
    /// `PRAGMA application_id` of every venue hub store ("VBHB").
    static let applicationID: Int32 = 0x5642_4842
    /// `PRAGMA user_version` after the last migration this build knows.
    static let version = 2

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 hub") { db in
            try db.execute(sql: """
                CREATE TABLE node_visit (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    node TEXT NOT NULL,
                    diary TEXT NOT NULL,
                    visit INTEGER NOT NULL,
                    version INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    metadata BLOB,
                    check_in REAL NOT NULL,
                    last_seen REAL NOT NULL,
                    check_out REAL,
                    samples INTEGER NOT NULL,
                    rssi_max INTEGER NOT NULL,
                    rssi_sum INTEGER NOT NULL,
                    clock_uncorrected INTEGER NOT NULL,
                    UNIQUE (node, diary, visit)
                );
                CREATE INDEX node_visit_check_in ON node_visit(check_in);
                CREATE TABLE node_diary (
                    node TEXT NOT NULL,
                    diary TEXT NOT NULL,
                    acked INTEGER NOT NULL,
                    first_seen REAL NOT NULL,
                    PRIMARY KEY (node, diary)
                ) WITHOUT ROWID;
                CREATE TABLE node (
                    name TEXT PRIMARY KEY NOT NULL,
                    last_seen REAL,
                    online INTEGER NOT NULL,
                    clock_synchronised INTEGER
                ) WITHOUT ROWID;
                CREATE TABLE node_gap (
                    node TEXT NOT NULL,
                    start REAL NOT NULL,
                    "end" REAL
                );
                CREATE INDEX node_gap_node ON node_gap(node, start);
                PRAGMA application_id = 1447184450;
                PRAGMA user_version = 1;
                """)
        }
        // `shared`: the node marked the visit's identity as carried by two or more devices at once.
        migrator.registerMigration("v2 shared identity") { db in
            try db.execute(sql: """
                ALTER TABLE node_visit ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 2;
                """)
        }
        return migrator
    }
}
