import Foundation
import GRDB

/// A span of time that visits may overlap; nil bounds are open.
public struct VisitWindow: Sendable, Equatable {
    public var from: Double?
    public var to: Double?

    public init(from: Double?, to: Double?) {
        self.from = from
        self.to = to
    }

    /// Every visit.
    public static let all = VisitWindow(from: nil, to: nil)
}

/// Counts for `venue-beacon diary stats`.
public struct DiaryStats: Sendable, Equatable {
    public var visits: Int
    public var openVisits: Int
    public var oldestCheckIn: Double?
    public var newestCheckOut: Double?
    /// Visits whose times come from an unsynchronised clock and could not be corrected.
    public var uncorrectedVisits: Int
    /// Bytes on disk: the database file plus its write-ahead log.
    public var fileBytes: Int64
}

/// The venue diary file: one SQLite database through GRDB, in WAL mode.
///
/// Opening checks, before anything is written, that the file is empty or a venue diary this
/// build understands; anything else is refused with a ``DiaryError`` and left byte for byte as
/// it was. Then the schema is migrated. One process-wide store per file; it is `Sendable`, but
/// writes to visits belong to one owner (``VenueDiary`` or a replay).
///
/// Connection settings, and why:
/// - WAL: readers (`diary stats`, `export`) never block the service's writes.
/// - `synchronous = FULL`: every commit is synced to the WAL. With NORMAL, WAL commits survive a
///   process crash but a power cut can roll back everything since the last checkpoint, which
///   could be many minutes of visits; FULL costs one fsync per batch (every 2 minutes live),
///   which keeps the "a power cut loses at most the last batch" promise.
/// - `page_size = 512` (new files; SQLite's smallest): a commit appends every page it changes to
///   the WAL and a checkpoint writes it again, and a check-out rewrites one ~200-byte visit row
///   on a page of its own, so small pages write less for the same rows (SD-card wear).
/// - `wal_autocheckpoint = 8000` pages (about 4 MB of WAL, not SQLite's 1,000): the pages every
///   commit rewrites (the tails of the visit table and its index, the progress table) are
///   copied into the database once per checkpoint, so rarer checkpoints write them less often.
/// - `secure_delete = ON`: purged visits are overwritten, not left in free pages; and a purge that
///   deletes visits rebuilds the file (`VACUUM`), because SQLite leaves copies of moved rows in the
///   unused middle of pages it rebuilt (see ``DeletedRowScrub``).
/// - A busy timeout, because the CLI and the service may open the file at the same time.
public struct DiaryStore: Sendable {
    public let path: String
    public let isReadOnly: Bool
    let database: DatabasePool
    private let scrub = DeletedRowScrub()

    /// The page size of new diary files (existing files keep theirs).
    static let pageSize = 512
    /// WAL pages after which a commit copies the WAL into the database.
    static let checkpointPages = 8000

    /// Opens (creating when absent, unless `readOnly`) and migrates the diary at `path`.
    public init(path: String, readOnly: Bool = false) throws {
        self.path = path
        self.isReadOnly = readOnly
        let exists = FileManager.default.fileExists(atPath: path)
        if exists {
            try Self.checkIdentity(path: path, readOnly: readOnly)
        } else if readOnly {
            throw DiaryError.missing(path: path)
        } else {
            try Self.createPrivateFile(path)
        }

        var config = Configuration()
        config.label = "venue-diary"
        config.readonly = readOnly
        config.busyMode = .timeout(10)
        // Each connection's page cache, 512 KiB (SQLite's default is 2 MiB): the service writes
        // the diary's tail and exports stream it once; neither gains from more.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -512")
            if !readOnly {
                try db.execute(sql: "PRAGMA page_size = \(Self.pageSize); PRAGMA secure_delete = ON")
            }
        }
        do {
            database = try DatabasePool(path: readOnly ? Self.readingLocation(path) : path, configuration: config)
            if !readOnly {
                // After the pool's own WAL setup, which chooses NORMAL; the pool keeps this one
                // writer connection for its lifetime.
                try database.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
                }
                try DiarySchema.migrator.migrate(database)
            }
        } catch let error as DatabaseError {
            throw DiaryError.from(error, path: path) ?? DiaryError.unreadable(path: path, reason: error.message ?? "\(error)")
        }
    }

    /// Where a reader opens the diary. A WAL database needs its `-shm` index to be read, which
    /// SQLite creates beside the file; when neither the file nor its directory can be written
    /// by this user (a copy on a write-protected stick, a diary owned by the service's user
    /// read through a group) and no `-wal` file is there, nothing can be writing it, so it is
    /// opened as immutable and read without an index (SQLite's `immutable=1`).
    static func readingLocation(_ path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let writable = access(path, W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK) == 0
        guard !writable, access(path + "-wal", F_OK) != 0 else { return path }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let encoded = absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute
        return "file:\(encoded)?immutable=1"
    }

    /// Creates an empty diary file readable by its owner only (0600, whatever the umask): it will
    /// hold phone identifiers and visit times. SQLite gives the `-wal` and `-shm` files it creates
    /// beside it the same mode.
    private static func createPrivateFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw DiaryError.ioFailure(path: path, reason: "cannot create the file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else {
            throw DiaryError.ioFailure(path: path, reason: "cannot make the file private: \(String(cString: strerror(errno)))")
        }
    }

    /// Refuses, without writing, anything but an empty file or a diary of a known schema.
    private static func checkIdentity(path: String, readOnly: Bool) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DiaryError.unreadable(path: path, reason: "cannot open the file")
        }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        if !header.isEmpty && header != Data("SQLite format 3\0".utf8) {
            throw DiaryError.notADiary(path: path, reason: "not an SQLite database")
        }

        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: readingLocation(path), configuration: config)
            defer { try? queue.close() }
            try queue.read { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                let objects = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                guard applicationID == DiarySchema.applicationID else {
                    if applicationID != 0 || version != 0 || objects != 0 {
                        let id = String(UInt32(bitPattern: applicationID), radix: 16)
                        throw DiaryError.notADiary(
                            path: path, reason: "an SQLite database with application_id 0x\(id) and \(objects) schema objects")
                    }
                    // An empty database (for example one created just before a crash) is adopted,
                    // except by a reader, which would find no diary in it.
                    if readOnly { throw DiaryError.missing(path: path) }
                    return
                }
                let superseded = try DiarySchema.migrator.hasBeenSuperseded(db)
                if version > DiarySchema.version || superseded {
                    throw DiaryError.newerSchema(path: path, version: version, supported: DiarySchema.version)
                }
                if readOnly && version < DiarySchema.version {
                    throw DiaryError.needsMigration(path: path, version: version, current: DiarySchema.version)
                }
                // Before anything is written into it or read out of it: a damaged file would
                // take in new visits (a replay, the service) or stream half an export.
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check(1)")
                if problems != ["ok"] {
                    let found = problems.joined(separator: " ").split(whereSeparator: \.isNewline).joined(separator: " ")
                    throw DiaryError.damaged(path: path, reason: "quick_check: \(found.prefix(300))")
                }
            }
        } catch let error as DatabaseError {
            // The header said SQLite: SQLITE_NOTADB now means a damaged header, not a foreign file.
            throw DiaryError.from(error, path: path) ?? DiaryError.unreadable(path: path, reason: error.message ?? "\(error)")
        }
    }

    // MARK: Queries

    /// Visits overlapping `window`, oldest check-in first.
    public func visits(in window: VisitWindow = .all) throws -> [Visit] {
        var visits: [Visit] = []
        try forEachVisit(in: window) { visits.append($0) }
        return visits
    }

    /// Streams the visits overlapping `window`, oldest check-in first, without loading them all.
    public func forEachVisit(in window: VisitWindow, _ body: (Visit) throws -> Void) throws {
        try forEachRow(in: window) { row in try body(row.visit()) }
    }

    /// Streams the rows of the visits overlapping `window`, oldest check-in first (the export
    /// reads them without copying payloads).
    func forEachRow(in window: VisitWindow, _ body: (VisitRow) throws -> Void) throws {
        let clauses = window.clauses
        try database.read { db in
            try VisitColumns.forEach(db, clauses.sql, arguments: clauses.arguments, body)
        }
    }

    /// Visits overlapping `window` whose times come from an unsynchronised clock and are not
    /// corrected (see ``DiaryClock``).
    public func uncorrectedVisitCount(in window: VisitWindow = .all) throws -> Int {
        try database.read { db in try window.uncorrectedRequest.fetchOne(db) ?? 0 }
    }

    /// Visits not yet checked out.
    public func openVisits() throws -> [Visit] {
        try openVisitsWithClock().map(\.visit)
    }

    /// Visits not yet checked out, each with the clock it was recorded on: nil for a
    /// synchronised clock, else the boot and `wall − CLOCK_BOOTTIME` of its unsynchronised clock.
    func openVisitsWithClock() throws -> [(visit: Visit, clock: (bootID: String, wallMinusBoot: Double)?)] {
        try database.read { db in
            var open: [(visit: Visit, clock: (bootID: String, wallMinusBoot: Double)?)] = []
            try VisitColumns.forEach(db, extraColumns: ", v.clock_offset AS clock_offset", "WHERE v.check_out IS NULL ORDER BY v.id") { row in
                open.append((try row.visit(), row.clockBoot.map { ($0, row.clockOffset ?? .nan) }))
            }
            return open
        }
    }

    public func visit(id: Int64) throws -> Visit? {
        try database.read { db in
            var visit: Visit?
            try VisitColumns.forEach(db, "WHERE v.id = ?", arguments: [id]) { row in visit = try row.visit() }
            return visit
        }
    }

    public func stats() throws -> DiaryStats {
        var stats = try database.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT count(*), count(*) - count(check_out), min(check_in), max(check_out), count(clock_boot) FROM visit
                """)
            return DiaryStats(
                visits: row?[0] ?? 0, openVisits: row?[1] ?? 0, oldestCheckIn: row?[2], newestCheckOut: row?[3],
                uncorrectedVisits: row?[4] ?? 0, fileBytes: 0)
        }
        for file in [path, path + "-wal"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value
            stats.fileBytes += size ?? 0
        }
        return stats
    }

    // MARK: Writes

    /// Deletes finished visits whose check-out is more than `recordingDays` before `now`
    /// (nil keeps everything; 0 deletes every visit, open ones too). Returns the rows deleted.
    /// Afterwards the file is rebuilt and its write-ahead log truncated, so deleted visits linger
    /// nowhere (see ``DeletedRowScrub``).
    @discardableResult
    public func purge(now: Double, recordingDays: Int?) throws -> Int {
        guard let recordingDays else { return 0 }
        guard recordingDays >= 0 else {
            throw DiaryError.invalidSetting(
                name: "recording_days", value: "\(recordingDays)", allowed: "a whole number of days ≥ 0, or forever")
        }
        let deleted = try database.write { db in
            if recordingDays == 0 {
                try db.execute(sql: "DELETE FROM progress")
                try db.execute(sql: "DELETE FROM visit")
                return db.changesCount
            }
            // Finished visits by their check-out; open ones (left open by an interrupted replay,
            // say) by their last sighting, so none outlives recording_days.
            let cutoff = now - Double(recordingDays) * 86_400
            try db.execute(sql: "DELETE FROM visit WHERE check_out < ?", arguments: [cutoff])
            var deleted = db.changesCount
            let stale = try Int64.fetchAll(db, sql: """
                SELECT v.id FROM visit v LEFT JOIN progress p ON p.visit = v.id
                WHERE v.check_out IS NULL AND coalesce(p.last_seen, v.last_seen) < ?
                """, arguments: [cutoff])
            for id in stale {
                try db.execute(sql: "DELETE FROM progress WHERE visit = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM visit WHERE id = ?", arguments: [id])
                deleted += db.changesCount
            }
            return deleted
        }
        try scrub.afterPurge(deleted: deleted, in: database)
        return deleted
    }

    /// Closes, at their last sighting, the open visits unseen for longer than `abandonedAfter`
    /// (``DiarySettings/abandonedAfter``) at `now`: what an interrupted replay (killed, a full
    /// disk, a file that changed) or a service that did not stop cleanly left open. Visits still
    /// carrying an unsynchronised clock are left to the service, which corrects them in their
    /// boot. Returns how many it closed. Every command that writes the diary calls it first.
    @discardableResult
    public func closeAbandonedVisits(now: Double, abandonedAfter: Double) throws -> Int {
        try database.write { db in
            var abandoned: [Visit] = []
            try VisitColumns.forEach(db, "WHERE v.check_out IS NULL AND v.clock_boot IS NULL AND coalesce(p.last_seen, v.last_seen) < ?", arguments: [now - abandonedAfter]) { row in
                abandoned.append(try row.visit())
            }
            guard !abandoned.isEmpty else { return 0 }
            let statements = try VisitStatements(db, clock: .synchronised)
            for visit in abandoned {
                guard let id = visit.id else { continue }
                var closed = visit
                closed.checkOut = visit.lastSeen
                _ = try statements.update(StoredVisit(id: id, checkIn: visit.checkIn), to: closed)
            }
            return abandoned.count
        }
    }

    /// Stores visits in one transaction, updating any visit with the same identity
    /// (kind, payload, check-in) that has no more samples. For imports, tests and benchmarks;
    /// the live path goes through ``VenueDiary``.
    public func save(_ visits: [Visit], clock: DiaryClock = .synchronised) throws {
        try database.write { db in
            let statements = try VisitStatements(db, clock: clock)
            for visit in visits {
                _ = try statements.upsert(visit)
            }
        }
    }
}
