import Foundation
import GRDB
import Sightings
import VenueDiary

/// Why the venue hub store refused to do something. Each message names the file.
public enum HubStoreError: Error, Equatable, CustomStringConvertible {
    /// The file exists but is not a venue hub store; it was not modified.
    case notAHubStore(path: String, reason: String)
    /// The store was written by a newer venue-beacon; it was not modified.
    case newerSchema(path: String, version: Int, supported: Int)
    /// SQLite found the file damaged: nothing more is written into it.
    case damaged(path: String, reason: String)
    /// The file cannot be opened, read or written (I/O error, full disk, permissions); what was
    /// being written was rolled back.
    case unusable(path: String, reason: String)
    /// A node's message the store does not take (a bad node name or diary id, changes out of
    /// order); nothing of it was written.
    case invalidBatch(path: String, node: String, diary: String, reason: String)
    /// A setting the store cannot use.
    case invalidSetting(name: String, value: String, allowed: String)

    public var description: String {
        switch self {
        case let .notAHubStore(path, reason):
            "\(path) is not a venue hub store (\(reason)); refusing to touch it. Point the hub at a new file or an existing hub store."
        case let .newerSchema(path, version, supported):
            "\(path) is a venue hub store written by a newer venue-beacon (schema \(version); this build knows up to \(supported)); refusing to touch it. Upgrade venue-beacon."
        case let .damaged(path, reason):
            "the venue hub store \(path) is damaged (\(reason)); nothing more is written into it. The nodes keep their own diaries: move the file aside and let them send again."
        case let .unusable(path, reason):
            "cannot use the venue hub store \(path): \(reason)"
        case let .invalidBatch(path, node, diary, reason):
            "refused a batch from node \(node) (diary \(diary)) for \(path): \(reason)"
        case let .invalidSetting(name, value, allowed):
            "invalid \(name) \(value): \(allowed)"
        }
    }

    /// What an SQLite failure on the store at `path` means; other errors pass through.
    static func from(_ error: any Error, path: String) -> any Error {
        guard let error = error as? DatabaseError else { return error }
        let message = error.message ?? "SQLite error \(error.resultCode.rawValue)"
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return HubStoreError.damaged(path: path, reason: message)
        case .SQLITE_FULL:
            return HubStoreError.unusable(path: path, reason: "the disk is full")
        case .SQLITE_READONLY, .SQLITE_PERM:
            return HubStoreError.unusable(
                path: path, reason: "\(message): the file, its directory or its file system is read-only for this user (uid \(geteuid()))")
        default:
            return HubStoreError.unusable(path: path, reason: message)
        }
    }
}

/// One node of the venue as the hub knows it (``HubStore/status(now:window:)``).
public struct HubNodeStatus: Sendable, Equatable {
    public var name: String
    /// When the hub last heard from the node (a batch, or an online status); nil: never.
    public var lastSeen: Double?
    public var online: Bool
    /// Whether the node last said its clock is synchronised; nil: it never said.
    public var clockSynchronised: Bool?
    /// Visits the hub holds from this node (all its diaries).
    public var visits: Int
    /// The node's diaries, first heard first: the last is its current one.
    public var diaries: [HubDiaryStatus]
    /// Offline periods overlapping the window asked for, oldest first.
    public var gaps: [HubGap]

    /// The acknowledged change of the node's current diary; nil when no diary was heard.
    public var acked: Int64? { diaries.last?.acked }
}

/// One diary of a node: a new diary file on the node starts its change numbers afresh.
public struct HubDiaryStatus: Sendable, Equatable {
    public var diary: String
    /// The highest change up to which the hub committed every change of this diary.
    public var acked: Int64
    public var firstSeen: Double
}

/// A period a node was offline.
public struct HubGap: Sendable, Equatable {
    public var start: Double
    /// The node's return; for a node still offline, the `now` of the query.
    public var end: Double
    /// The node has not come back yet.
    public var isOpen: Bool
}

/// One node's visit as the hub stores it: a segment of a venue-wide visit.
public struct HubSegment: Sendable, Equatable {
    /// The hub's own id (never reused).
    public var id: Int64
    public var node: String
    public var diary: String
    /// The node's diary row id.
    public var nodeVisitID: Int64
    /// The change number of the stored state.
    public var version: Int64
    /// The state; its `id` is the hub's ``id``.
    public var visit: Visit

    public init(id: Int64, node: String, diary: String, nodeVisitID: Int64, version: Int64, visit: Visit) {
        self.id = id
        self.node = node
        self.diary = diary
        self.nodeVisitID = nodeVisitID
        self.version = version
        self.visit = visit
        self.visit.id = id
    }
}

/// The venue hub's store: every node's visits, as replicated, in one SQLite file (WAL).
///
/// Opening checks, before anything is written, that the file is empty or a hub store this
/// build understands (its own `application_id`, "VBHB"); anything else is refused with a
/// ``HubStoreError`` and left as it was. The file is created 0600 (it holds phone identifiers);
/// SQLite gives its `-wal` and `-shm` files the same mode. `synchronous = FULL`: an
/// acknowledgement sent after ``commit(node:diary:prev:visits:now:)`` returned survives a power
/// cut, so a node never drops a change the hub lost. `secure_delete = ON` and a scrub after each purge
/// that deletes (``DeletedRowScrub``): purged visits linger nowhere in the file or its log.
///
/// One store per file and process; it is `Sendable` and may be read from any thread while one
/// owner writes.
public struct HubStore: Sendable {
    public let path: String
    let database: DatabasePool
    private let scrub = DeletedRowScrub()

    /// Opens (creating when absent) and migrates the hub store at `path`.
    public init(path: String) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            try Self.checkIdentity(path: path)
        } else {
            try Self.createPrivateFile(path)
        }
        var config = Configuration()
        config.label = "venue-hub"
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        do {
            database = try DatabasePool(path: path, configuration: config)
            // After the pool's own WAL setup, which chooses NORMAL.
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            try HubSchema.migrator.migrate(database)
        } catch {
            throw HubStoreError.from(error, path: path)
        }
    }

    /// Creates an empty file readable by its owner only (0600, whatever the umask).
    private static func createPrivateFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw HubStoreError.unusable(path: path, reason: "cannot create the file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else {
            throw HubStoreError.unusable(path: path, reason: "cannot make the file private: \(String(cString: strerror(errno)))")
        }
    }

    /// Refuses, without writing, anything but an empty file or a hub store of a known schema.
    private static func checkIdentity(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw HubStoreError.unusable(path: path, reason: "cannot open the file")
        }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        if !header.isEmpty && header != Data("SQLite format 3\0".utf8) {
            throw HubStoreError.notAHubStore(path: path, reason: "not an SQLite database")
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            try queue.read { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let objects = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                guard applicationID == HubSchema.applicationID else {
                    if applicationID != 0 || version != 0 || objects != 0 {
                        let id = String(UInt32(bitPattern: applicationID), radix: 16)
                        throw HubStoreError.notAHubStore(
                            path: path, reason: "an SQLite database with application_id 0x\(id) and \(objects) schema objects")
                    }
                    return  // an empty database (created just before a crash) is adopted
                }
                let superseded = try HubSchema.migrator.hasBeenSuperseded(db)
                if version > HubSchema.version || superseded {
                    throw HubStoreError.newerSchema(path: path, version: version, supported: HubSchema.version)
                }
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check(1)")
                if problems != ["ok"] {
                    let found = problems.joined(separator: " ").split(whereSeparator: \.isNewline).joined(separator: " ")
                    throw HubStoreError.damaged(path: path, reason: "quick_check: \(found.prefix(300))")
                }
            }
        } catch let error as DatabaseError {
            throw HubStoreError.from(error, path: path)
        }
    }

    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try database.write(body) } catch { throw HubStoreError.from(error, path: path) }
    }

    private func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try database.read(body) } catch { throw HubStoreError.from(error, path: path) }
    }

    // MARK: Replication

    static let upsertVisitSQL = """
        INSERT INTO node_visit (node, diary, visit, version, kind, payload, metadata, check_in, last_seen, check_out,
                                samples, rssi_max, rssi_sum, clock_uncorrected, shared)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (node, diary, visit) DO UPDATE SET
            version = excluded.version, kind = excluded.kind, payload = excluded.payload, metadata = excluded.metadata,
            check_in = excluded.check_in, last_seen = excluded.last_seen, check_out = excluded.check_out,
            samples = excluded.samples, rssi_max = excluded.rssi_max, rssi_sum = excluded.rssi_sum,
            clock_uncorrected = excluded.clock_uncorrected, shared = excluded.shared
        WHERE excluded.version > node_visit.version
        """

    /// Whether `name` is a node name the hub takes: 1–64 of lowercase letters, digits and '-'.
    public static func isValidNodeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }

    /// Commits one message of `node`'s diary `diary` in one transaction and returns the diary's
    /// acknowledged change afterwards (what the hub tells the node it may stop resending).
    ///
    /// Each visit is upserted by (node, diary, visit id): a state replaces the stored one only if
    /// its change is higher, so a message received twice, or an old state after a newer one,
    /// changes nothing. `visits` must come in strictly ascending change order (else nothing is
    /// written and ``HubStoreError/invalidBatch(path:node:diary:reason:)`` is thrown).
    ///
    /// The acknowledgement: with `acked` the diary's stored value (0 for a diary not heard
    /// before), a message whose `prev` (the change the node sent before this batch) is at most
    /// `acked` continues what the hub holds, and `acked` becomes the batch's highest change if
    /// that is higher; a message with `prev > acked` follows a lost one and leaves `acked` as it
    /// is (the node resends from `acked`). The node's `last_seen` becomes `now` (a node first
    /// heard through a batch is taken to be online).
    ///
    /// `expiredBefore`: visits checked out before this time are past the hub's retention; they
    /// are acknowledged but not written (a node that resends an old state after the hub purged
    /// it must not bring it back).
    @discardableResult
    public func commit(
        node: String, diary: String, prev: Int64, visits: [ReplicatedVisit], now: Double, expiredBefore: Double? = nil
    ) throws -> Int64 {
        guard Self.isValidNodeName(node) else {
            throw HubStoreError.invalidBatch(
                path: path, node: node, diary: diary, reason: "a node name is 1-64 of lowercase letters, digits and '-'")
        }
        guard !diary.isEmpty, diary.utf8.count <= 128 else {
            throw HubStoreError.invalidBatch(path: path, node: node, diary: diary, reason: "a diary id is 1-128 bytes")
        }
        var highest: Int64?
        for visit in visits {
            if let highest, visit.change <= highest {
                throw HubStoreError.invalidBatch(
                    path: path, node: node, diary: diary,
                    reason: "changes not strictly ascending (\(visit.change) after \(highest))")
            }
            highest = visit.change
        }
        return try write { db in
            let stored = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT acked FROM node_diary WHERE node = ? AND diary = ?"), arguments: [node, diary])
            if !visits.isEmpty {
                let upsert = try db.cachedStatement(sql: Self.upsertVisitSQL)
                for visit in visits {
                    if let expiredBefore, let checkOut = visit.checkOut, checkOut < expiredBefore { continue }
                    upsert.setUncheckedArguments([
                        node, diary, visit.visitID, visit.change, visit.kind.rawValue, Data(visit.payload),
                        visit.metadata.map { Data($0) }, visit.checkIn, visit.lastSeen, visit.checkOut, visit.samples,
                        visit.rssiMax, visit.rssiSum, visit.clockUncorrected, visit.sharedIdentity,
                    ])
                    try upsert.execute()
                }
            }
            var acked = stored ?? 0
            if prev <= acked, let highest, highest > acked { acked = highest }
            if stored == nil {
                try db.cachedStatement(sql: "INSERT INTO node_diary (node, diary, acked, first_seen) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [node, diary, acked, now])
            } else if acked != stored {
                try db.cachedStatement(sql: "UPDATE node_diary SET acked = ? WHERE node = ? AND diary = ?")
                    .execute(arguments: [acked, node, diary])
            }
            try db.cachedStatement(sql: """
                INSERT INTO node (name, last_seen, online) VALUES (?, ?, 1)
                ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen
                """).execute(arguments: [node, now])
            return acked
        }
    }

    /// The highest change up to which every change of `node`'s diary `diary` is committed
    /// (0 for a diary never heard).
    public func acked(node: String, diary: String) throws -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT acked FROM node_diary WHERE node = ? AND diary = ?", arguments: [node, diary]) ?? 0
        }
    }

    /// Records a node's status message. Going offline (from online) opens a gap from when the
    /// node was last heard; coming back online closes it at `now`. `clockSynchronised` nil keeps what the node said before.
    /// Only an online status counts as hearing from the node (`last_seen`): an offline status
    /// may be the broker's last will, sent when the node was already gone.
    public func recordStatus(node: String, online: Bool, clockSynchronised: Bool?, now: Double) throws {
        guard Self.isValidNodeName(node) else {
            throw HubStoreError.invalidBatch(
                path: path, node: node, diary: "-", reason: "a node name is 1-64 of lowercase letters, digits and '-'")
        }
        try write { db in
            let wasOnline = try Bool.fetchOne(db, sql: "SELECT online FROM node WHERE name = ?", arguments: [node])
            if online {
                try db.execute(
                    sql: """
                        INSERT INTO node (name, last_seen, online, clock_synchronised) VALUES (?, ?, 1, ?)
                        ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen, online = 1,
                            clock_synchronised = coalesce(excluded.clock_synchronised, node.clock_synchronised)
                        """, arguments: [node, now, clockSynchronised])
                if wasOnline == false {
                    try db.execute(
                        sql: #"UPDATE node_gap SET "end" = max(start, ?) WHERE node = ? AND "end" IS NULL"#, arguments: [now, node])
                }
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO node (name, last_seen, online, clock_synchronised) VALUES (?, NULL, 0, ?)
                        ON CONFLICT (name) DO UPDATE SET online = 0,
                            clock_synchronised = coalesce(excluded.clock_synchronised, node.clock_synchronised)
                        """, arguments: [node, clockSynchronised])
                if wasOnline == true {
                    // From when the hub last heard from the node, not when it heard that the node
                    // is gone: the will comes a keepalive later, and a will retained while the hub
                    // itself was down arrives only when the hub starts.
                    try db.execute(
                        sql: #"INSERT INTO node_gap (node, start, "end") VALUES (?, coalesce((SELECT min(last_seen, ?) FROM node WHERE name = ?), ?), NULL)"#,
                        arguments: [node, now, node, now])
                }
            }
        }
    }

    /// Every node the hub has heard of, by name, with its offline gaps overlapping `window`
    /// (a gap still open is reported up to `now`).
    public func status(now: Double, window: VisitWindow = .all) throws -> [HubNodeStatus] {
        try read { db in
            var nodes: [HubNodeStatus] = []
            var index: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, last_seen, online, clock_synchronised FROM node ORDER BY name") {
                index[row[0]] = nodes.count
                nodes.append(HubNodeStatus(
                    name: row[0], lastSeen: row[1], online: row[2], clockSynchronised: row[3], visits: 0, diaries: [], gaps: []))
            }
            for row in try Row.fetchAll(db, sql: "SELECT node, count(*) FROM node_visit GROUP BY node") {
                if let i = index[row[0]] { nodes[i].visits = row[1] }
            }
            for row in try Row.fetchAll(db, sql: "SELECT node, diary, acked, first_seen FROM node_diary ORDER BY first_seen, diary") {
                if let i = index[row[0]] { nodes[i].diaries.append(HubDiaryStatus(diary: row[1], acked: row[2], firstSeen: row[3])) }
            }
            var sql = #"SELECT node, start, "end" FROM node_gap WHERE 1"#
            var arguments = StatementArguments()
            if let to = window.to {
                sql += " AND start <= ?"
                arguments += [to]
            }
            if let from = window.from {
                sql += #" AND ("end" IS NULL OR "end" >= ?)"#
                arguments += [from]
            }
            for row in try Row.fetchAll(db, sql: sql + " ORDER BY start", arguments: arguments) {
                guard let i = index[row[0]] else { continue }
                let start: Double = row[1]
                let end: Double? = row[2]
                nodes[i].gaps.append(HubGap(start: start, end: end ?? max(start, now), isOpen: end == nil))
            }
            return nodes
        }
    }

    /// Deletes visits checked out more than `recordingDays` days before `now` (nil keeps
    /// everything; 0 deletes every checked-out visit) and offline gaps that ended before then.
    /// Acknowledgements are kept, so a node does not resend what was purged. Afterwards the file
    /// is rebuilt and its write-ahead log truncated, so deleted visits linger nowhere
    /// (``DeletedRowScrub``). Returns the visits deleted.
    @discardableResult
    public func purge(now: Double, recordingDays: Int?) throws -> Int {
        guard let recordingDays else { return 0 }
        guard recordingDays >= 0 else {
            throw HubStoreError.invalidSetting(
                name: "recording_days", value: "\(recordingDays)", allowed: "a whole number of days ≥ 0, or forever")
        }
        let deleted = try write { db in
            if recordingDays == 0 {
                try db.execute(sql: "DELETE FROM node_visit WHERE check_out IS NOT NULL")
                let visits = db.changesCount
                try db.execute(sql: #"DELETE FROM node_gap WHERE "end" IS NOT NULL"#)
                return visits
            }
            let cutoff = now - Double(recordingDays) * 86_400
            try db.execute(sql: "DELETE FROM node_visit WHERE check_out < ?", arguments: [cutoff])
            let visits = db.changesCount
            try db.execute(sql: #"DELETE FROM node_gap WHERE "end" < ?"#, arguments: [cutoff])
            return visits
        }
        do {
            try scrub.afterPurge(deleted: deleted, in: database)
        } catch {
            throw HubStoreError.from(error, path: path)
        }
        return deleted
    }

    // MARK: Reading

    /// The stored node visits overlapping `window` (checked in by its end, not checked out
    /// before its start; an open visit lasts until now), by check-in then hub id.
    public func segments(in window: VisitWindow = .all) throws -> [HubSegment] {
        var segments: [HubSegment] = []
        try forEachSegment(in: window) { segments.append($0) }
        return segments
    }

    /// Streams ``segments(in:)`` without holding them all.
    public func forEachSegment(in window: VisitWindow, _ body: (HubSegment) throws -> Void) throws {
        var sql = """
            SELECT id, node, diary, visit, version, kind, payload, metadata, check_in, last_seen, check_out,
                   samples, rssi_max, rssi_sum, clock_uncorrected, shared
            FROM node_visit WHERE 1
            """
        var arguments = StatementArguments()
        if let to = window.to {
            sql += " AND check_in <= ?"
            arguments += [to]
        }
        if let from = window.from {
            sql += " AND (check_out IS NULL OR check_out >= ?)"
            arguments += [from]
        }
        sql += " ORDER BY check_in, id"
        try read { db in
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                let id: Int64 = row[0]
                let kindText: String = row[5]
                guard let kind = PayloadKind(rawValue: kindText) else {
                    throw HubStoreError.damaged(path: path, reason: "visit \(id) has unknown kind '\(kindText)'")
                }
                let payload = try row.withUnsafeData(atIndex: 6) { $0.map { [UInt8]($0) } ?? [] }
                let metadata = try row.withUnsafeData(atIndex: 7) { $0.map { [UInt8]($0) } }
                let visit = Visit(
                    id: id, kind: kind, payload: payload, checkIn: row[8], lastSeen: row[9], checkOut: row[10],
                    samples: row[11], rssiMax: row[12], rssiSum: row[13], clockUncorrected: row[14], metadata: metadata,
                    sharedIdentity: row[15])
                try body(HubSegment(id: id, node: row[1], diary: row[2], nodeVisitID: row[3], version: row[4], visit: visit))
            }
        }
    }
}
