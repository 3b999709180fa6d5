import Foundation
import GRDB

/// What `diary salvage` copied.
public struct SalvageReport: Sendable, Equatable {
    /// Visits copied into the new diary.
    public var visits = 0
    /// Progress rows (open visits' newer state) copied with them.
    public var progress = 0
    /// Visit ids at or below the highest known id that could not be read (lost, or never used).
    public var unreadableIDs = 0
    /// Ranges of the file that SQLite refused to read, for the record.
    public var failedReads = 0
}

/// Looking at and rescuing a diary that may be damaged. Both open the file read-only and
/// without the checks ``DiaryStore`` makes, since those refuse damaged files.
public enum DiaryRepair {
    /// SQLite's full `integrity_check`: `["ok"]`, or up to `limit` problems found.
    public static func check(path: String, limit: Int = 100) throws -> [String] {
        guard FileManager.default.fileExists(atPath: path) else { throw DiaryError.missing(path: path) }
        do {
            let queue = try openReadOnly(path)
            defer { try? queue.close() }
            return try queue.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check(\(limit))") }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB {
            // So damaged that the check itself stops: that is its finding.
            return [error.message ?? "database disk image is malformed"]
        } catch {
            throw DiaryError.from(error, path: path) ?? error
        }
    }

    /// Copies every visit of `source` that SQLite can still read into a new diary at
    /// `destination` (which must not exist), keeping ids, times and clock marks. Ranges that fail
    /// are split down to single visits, so one damaged page costs only the visits stored on it.
    public static func salvage(from source: String, to destination: String) throws -> SalvageReport {
        guard FileManager.default.fileExists(atPath: source) else { throw DiaryError.missing(path: source) }
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw DiaryError.invalidSetting(name: "salvage destination", value: destination, allowed: "a file that does not exist yet")
        }
        let queue: DatabaseQueue
        do {
            queue = try openReadOnly(source)
        } catch {
            throw DiaryError.from(error, path: source) ?? error
        }
        defer { try? queue.close() }
        let version = (try? queue.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }) ?? nil
        guard version == DiarySchema.version else {
            throw DiaryError.damaged(
                path: source,
                reason: "its schema version reads \(version.map(String.init) ?? "nothing"), this build salvages version \(DiarySchema.version) only")
        }
        let highest = highestID(queue)
        let target = try DiaryStore(path: destination)
        try keepReplicationIdentity(from: queue, in: target)
        var report = SalvageReport()
        var start: Int64 = 1
        let step: Int64 = 4096
        while start <= highest {
            let end = min(start + step - 1, highest)
            let rows = readVisits(queue, from: start, to: end, report: &report)
            try target.database.write { db in
                for row in rows {
                    try db.execute(sql: "INSERT INTO visit (\(visitColumns)) VALUES (\(placeholders(visitColumns)))", arguments: StatementArguments(row.visit)!)
                    report.visits += 1
                    if let progress = row.progress {
                        try db.execute(
                            sql: "INSERT INTO progress (\(progressColumns)) VALUES (\(placeholders(progressColumns)))",
                            arguments: StatementArguments(progress)!)
                        report.progress += 1
                    }
                }
                // Ids stay unique after the rescue: new visits continue above the highest old id.
                try db.execute(sql: "INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('visit', ?)", arguments: [highest])
            }
            report.unreadableIDs += Int(end - start + 1) - rows.count
            start = end + 1
        }
        return report
    }

    /// The rescued diary stays the same diary for the venue hub: it keeps its id, and its
    /// visits are renumbered above every change the old file gave (so the hub, which may have
    /// acknowledged up to there, is sent them all again: its writes are idempotent). Without a
    /// readable id the copy keeps the new one it was made with: the hub then holds the old
    /// visits twice, under two diary ids.
    private static func keepReplicationIdentity(from queue: DatabaseQueue, in target: DiaryStore) throws {
        let id = try? queue.read { db in try String.fetchOne(db, sql: "SELECT id FROM diary_info") }
        var lastChange: Int64 = 0
        for sql in ["SELECT max(change) FROM visit_change", "SELECT seq FROM sqlite_sequence WHERE name = 'visit_change'", "SELECT acked FROM replication_ack"] {
            if let value = try? queue.read({ db in try Int64.fetchOne(db, sql: sql) }) { lastChange = max(lastChange, value) }
        }
        try target.database.write { db in
            if let id { try db.execute(sql: "UPDATE diary_info SET id = ?", arguments: [id]) }
            // A row at the old last change, gone at once, leaves AUTOINCREMENT counting from it
            // (writing sqlite_sequence by hand can leave two rows for one table).
            if lastChange > 0 {
                try db.execute(sql: "INSERT INTO visit_change (change, visit) VALUES (?, -1)", arguments: [lastChange])
                try db.execute(sql: "DELETE FROM visit_change WHERE visit = -1")
            }
        }
    }

    static let visitColumns = "id, kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum, clock_boot, clock_offset, metadata, shared"
    static let progressColumns = "visit, last_seen, samples, rssi_max, rssi_sum"

    private static func placeholders(_ columns: String) -> String {
        columns.split(separator: ",").map { _ in "?" }.joined(separator: ", ")
    }

    private static func openReadOnly(_ path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(10)
        return try DatabaseQueue(path: DiaryStore.readingLocation(path), configuration: config)
    }

    /// The highest visit id the file knows, from whichever of its records still reads.
    private static func highestID(_ queue: DatabaseQueue) -> Int64 {
        let sources = [
            "SELECT max(id) FROM visit",
            "SELECT seq FROM sqlite_sequence WHERE name = 'visit'",
            "SELECT max(visit) FROM progress",
        ]
        var highest: Int64 = 0
        for sql in sources {
            if let value = try? queue.read({ db in try Int64.fetchOne(db, sql: sql) }) {
                highest = max(highest, value)
            }
        }
        return highest
    }

    private struct SalvagedRow {
        var visit: [DatabaseValue]
        var progress: [DatabaseValue]?
    }

    /// The visits with ids in `from...to` that read, splitting failed ranges in halves.
    private static func readVisits(_ queue: DatabaseQueue, from: Int64, to: Int64, report: inout SalvageReport) -> [SalvagedRow] {
        do {
            return try queue.read { db in
                let visits = try Row.fetchAll(db, sql: "SELECT \(visitColumns) FROM visit WHERE id BETWEEN ? AND ? ORDER BY id", arguments: [from, to])
                var progress: [Int64: [DatabaseValue]] = [:]
                // An open visit's newer state; if its page is damaged, the visit row's older state stands.
                if let rows = try? Row.fetchAll(
                    db, sql: "SELECT \(progressColumns) FROM progress WHERE visit BETWEEN ? AND ?", arguments: [from, to]) {
                    for row in rows { progress[row[0]] = Array(row.databaseValues) }
                }
                return visits.map { row in
                    SalvagedRow(visit: Array(row.databaseValues), progress: progress[row[0]])
                }
            }
        } catch {
            report.failedReads += 1
            guard from < to else { return [] }
            let middle = from + (to - from) / 2
            return readVisits(queue, from: from, to: middle, report: &report)
                + readVisits(queue, from: middle + 1, to: to, report: &report)
        }
    }
}
