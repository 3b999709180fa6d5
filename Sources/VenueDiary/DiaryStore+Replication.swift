import GRDB

/// The hub's last acknowledgement of this diary, as the node keeps it.
public struct ReplicationAck: Sendable, Equatable {
    /// The diary id the hub acknowledged (this diary's, unless the file was replaced).
    public var diary: String
    /// Every change up to this one is committed at the hub.
    public var acked: Int64
    /// When the node heard it (wall-clock Unix seconds).
    public var at: Double

    public init(diary: String, acked: Int64, at: Double) {
        self.diary = diary
        self.acked = acked
        self.at = at
    }
}

/// The diary as the outbox of replication to a venue hub (schema v4, docs/venue.md): every
/// write to a visit gives it a new change number, and what is above the hub's acknowledgement
/// is the backlog.
extension DiaryStore {
    /// The id this diary was given when it was made: the hub keys a node's visits by it.
    public func diaryID() throws -> String {
        try database.read { db in try String.fetchOne(db, sql: "SELECT id FROM diary_info") } ?? ""
    }

    /// Up to `limit` visits whose latest change is above `change`, lowest change first, each with
    /// that change number. An open visit comes with its latest progress (a checkpoint).
    public func changes(after change: Int64, limit: Int) throws -> [(change: Int64, visit: Visit)] {
        try database.read { db in
            var found: [(change: Int64, visit: Visit)] = []
            found.reserveCapacity(min(limit, 4096))
            try VisitColumns.forEach(
                db, extraColumns: ", c.change AS change",
                "JOIN visit_change c ON c.visit = v.id WHERE c.change > ? ORDER BY c.change LIMIT ?",
                arguments: [change, limit]
            ) { row in
                found.append((row.row["change"], try row.visit()))
            }
            return found
        }
    }

    /// The highest change number given so far (0: none).
    public func lastChange() throws -> Int64 {
        try database.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'visit_change'") ?? 0
        }
    }

    /// How many visits have a change above `acked`: what the hub has still to acknowledge.
    public func backlog(after acked: Int64) throws -> Int {
        try database.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM visit_change WHERE change > ?", arguments: [acked]) ?? 0
        }
    }

    /// The hub's acknowledgement as last kept, or nil if none was ever heard.
    public func replicationAck() throws -> ReplicationAck? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT diary, acked, at FROM replication_ack").map {
                ReplicationAck(diary: $0[0], acked: $0[1], at: $0[2])
            }
        }
    }

    /// Keeps the hub's acknowledgement (one row, replaced).
    public func saveReplicationAck(_ ack: ReplicationAck) throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM replication_ack")
            try db.execute(
                sql: "INSERT INTO replication_ack (diary, acked, at) VALUES (?, ?, ?)", arguments: [ack.diary, ack.acked, ack.at])
        }
    }
}

extension DiaryStore {
    /// How many visits have a change above `acked` and at most `last`.
    public func backlog(after acked: Int64, upTo last: Int64) throws -> Int {
        try database.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM visit_change WHERE change > ? AND change <= ?", arguments: [acked, last]) ?? 0
        }
    }
}

extension DiaryStore {
    /// Phones present now (open visits) and visits checked in since `since`: counts for the
    /// venue's dashboards (Home Assistant), never identities.
    public func occupancy(since: Double) throws -> (present: Int, checkedIn: Int) {
        try database.read { db in
            let present = try Int.fetchOne(db, sql: "SELECT count(*) FROM visit WHERE check_out IS NULL") ?? 0
            let checkedIn = try Int.fetchOne(db, sql: "SELECT count(*) FROM visit WHERE check_in >= ?", arguments: [since]) ?? 0
            return (present, checkedIn)
        }
    }
}
