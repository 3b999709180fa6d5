import GRDB
import Synchronization

/// Leaves nothing of deleted rows in a SQLite file or its write-ahead log: what retention needs
/// of the diary (``DiaryStore``) and of the venue hub's store, whose rows name phones.
///
/// `secure_delete` zeroes a deleted row and every page freed, but a page that SQLite rebuilds
/// (a rebalance, when rows grow at check-out or go at retention) keeps its old layout's bytes in
/// its unused middle, between the cell pointers and the cells, so a copy of a row that once moved
/// can outlive the row inside a live page: a 365-day simulation found a purged identifier so, in
/// a page of two newer visits. `VACUUM` writes every page again from the live rows alone (it
/// costs about twice the file in writes: into the log, then into the file); then the log, which
/// holds the old pages, is truncated. A reader in the middle of a read keeps the log from being
/// reset (after the busy timeout): the truncation is then owed, and tried again at the next
/// purge whatever that deletes.
public final class DeletedRowScrub: Sendable {
    private let owed = Atomic<Bool>(false)

    public init() {}

    /// After a purge that deleted `deleted` rows from `database`: rebuilds the file when it
    /// deleted any, and truncates the log then or when the last truncation was blocked.
    public func afterPurge(deleted: Int, in database: DatabasePool) throws {
        guard deleted > 0 || owed.load(ordering: .relaxed) else { return }
        let blocked = try database.writeWithoutTransaction { db -> Bool in
            if deleted > 0 { try db.execute(sql: "VACUUM") }
            let result = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            return (result?[0] as Int?) != 0
        }
        owed.store(blocked, ordering: .relaxed)
    }
}
