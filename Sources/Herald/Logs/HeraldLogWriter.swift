import CivilDate
import Foundation
import Glibc

/// Writes the Herald-format logs into a directory: rows appended to `contacts.csv`,
/// `detection.csv` and `statistics.csv` rewritten when they change. Events are buffered in memory
/// and written by ``flush(now:)``, which the owner calls every few seconds: one write per flush,
/// not per advert (SD cards wear). `venue-beacon run` and `venue-beacon simulate --herald-logs`
/// both write through it. The files name phones by pseudonymous ids with times: they are created
/// 0600.
///
/// One UTC day per set of files: the three files at the top of the directory hold the current
/// day; when an event of a later day arrives, the day's files move into a folder named after it
/// (`2026-11-24/`, 0700: a complete set Herald's analysis reads on its own) and the next day
/// starts afresh, its detection list and statistics included. With `keepingDays` (the diary's
/// `recording_days`) a day's folder is deleted once its first moment is that many days old, so
/// no row outlives `recording_days` (the last rows of a day go up to a day early).
///
/// Memory stays bounded whatever the disk does: rows a flush cannot write (a full disk, an I/O
/// error) are dropped and counted (``droppedRows``), never kept for the next flush, and
/// `contacts.csv` is cut back to its length before the failed write, so no half row stays. The
/// first failure after a flush that worked returns a ``Notice`` (``Notice/failing(droppedRows:reason:)``),
/// later ones only count, and the first flush that writes again says how many rows the failures
/// cost. With a `budgetBytes`, the directory (its files and day folders) is kept within it: day
/// folders are deleted oldest first, and when the current day alone passes the budget its further
/// rows are dropped and counted until the next UTC day.
public struct HeraldLogWriter: Sendable {
    public let directory: String
    /// Days a day's logs are kept; nil keeps them.
    public let keepingDays: Int?
    /// Bytes the directory may hold (`[herald] log_budget_mb`); nil = no limit.
    public let budgetBytes: Int?
    /// Rows not written, since start: those of flushes that failed and those over the budget.
    public private(set) var droppedRows = 0
    /// Of ``droppedRows``, those dropped because the current day alone passed the budget.
    public private(set) var droppedOverBudget = 0
    /// Flushes that failed to write something.
    public private(set) var failedFlushes = 0
    /// Day folders deleted to stay within the budget.
    public private(set) var foldersDeletedForBudget = 0
    /// Why the last flush that wrote or tried to write failed; nil once one works.
    public private(set) var failure: String?
    /// Rows dropped since the failures began (for the notice when writes work again).
    private var droppedWhileFailing = 0
    /// The day whose further rows are dropped: it alone passed the budget.
    private var overBudgetDay: Int?
    private var contacts = ContactsLog()
    private var pendingContacts: [String] = []
    private var detection: DetectionLog
    private var statistics: StatisticsLog
    /// What a new day starts from.
    private let freshDetection: DetectionLog
    private let freshStatistics: StatisticsLog
    private var detectionChanged = true
    private var statisticsChanged = true
    /// The UTC day (days since 1970) of the rows at the top of the directory; nil before any.
    private var day: Int?
    /// Days that ended since the last flush, oldest first, with their last rows and files. Only
    /// the first stays past a flush (when moving its files into its folder failed): the ones
    /// after it wrote nothing and are dropped.
    private var endedDays: [EndedDay] = []
    /// When the next flush looks for days to delete (the first flush does).
    private var nextPurge = -Double.infinity

    private struct EndedDay: Sendable {
        var day: Int
        var rows: [String]
        /// The files' contents until written.
        var detection: String?
        var statistics: String?
        /// The folder its files go into, once created.
        var folder: String?
    }

    /// What the owner should log: at most one of each kind per flush.
    public enum Notice: Sendable, Equatable, CustomStringConvertible {
        /// The first flush that failed after one that worked (or since start): the rows it
        /// dropped and why. Later failures say nothing until a flush writes again.
        case failing(droppedRows: Int, reason: String)
        /// A flush wrote after failures: the rows dropped while they lasted.
        case writingAgain(droppedRows: Int)
        /// The current day (`YYYY-MM-DD`) alone passed the budget: its further rows are dropped,
        /// counted, until the next UTC day.
        case dayOverBudget(day: String, budgetBytes: Int)
        /// Day folders deleted, oldest first, to keep the directory within the budget.
        case deletedForBudget(folders: [String], budgetBytes: Int)

        public var description: String {
            switch self {
            case .failing(let rows, let reason):
                return "Herald logs: \(rows) rows dropped: \(reason) (later rows that cannot be written are dropped and counted too)"
            case .writingAgain(let rows):
                return "Herald logs: written again; \(rows) rows were dropped while writes failed"
            case .dayOverBudget(let day, let budget):
                return "Herald logs: \(day) alone passes the budget of \(Self.megabytes(budget)) (log_budget_mb): its further rows are dropped and counted until the next UTC day"
            case .deletedForBudget(let folders, let budget):
                return "Herald logs: deleted \(folders.joined(separator: ", ")) (oldest first) to stay within the budget of \(Self.megabytes(budget)) (log_budget_mb)"
            }
        }

        /// "4000 MB", or the bytes when not whole megabytes (10^6 bytes).
        public static func megabytes(_ bytes: Int) -> String {
            bytes % 1_000_000 == 0 ? "\(bytes / 1_000_000) MB" : "\(bytes) bytes"
        }
    }

    /// `detection` starts from the list a `detection.csv` already in `directory` holds (Herald
    /// keeps it across restarts), and the day from the first row of a `contacts.csv` there.
    public init(directory: String, detection: DetectionLog, statistics: StatisticsLog, keepingDays: Int? = nil, budgetBytes: Int? = nil) {
        self.directory = directory
        self.keepingDays = keepingDays
        self.budgetBytes = budgetBytes
        freshDetection = detection
        freshStatistics = statistics
        var detection = detection
        if let previous = try? String(contentsOfFile: directory + "/detection.csv", encoding: .utf8) {
            detection.restore(from: previous)
        }
        self.detection = detection
        self.statistics = statistics
        day = Self.firstRowDay(directory + "/contacts.csv")
    }

    /// The logs of the node whose own (venue beacon) payload is `ownPayload`, on a device named
    /// `deviceName` running `softwareVersion`.
    public init(
        directory: String, deviceName: String, softwareVersion: String, ownPayload: [UInt8], keepingDays: Int? = nil, budgetBytes: Int? = nil
    ) {
        self.init(
            directory: directory,
            detection: DetectionLog(deviceName: deviceName, operatingSystemVersion: softwareVersion, ownPayload: ownPayload),
            statistics: StatisticsLog(ownPayload: ownPayload), keepingDays: keepingDays, budgetBytes: budgetBytes)
    }

    public mutating func record(_ event: SensorEvent, wallTime: Double) {
        let eventDay = Self.day(of: wallTime)
        if let day, eventDay > day {
            endedDays.append(EndedDay(day: day, rows: pendingContacts, detection: detection.line, statistics: statistics.content))
            pendingContacts.removeAll()
            detection = freshDetection
            statistics = freshStatistics
            detectionChanged = true
            statisticsChanged = true
        }
        if day.map({ eventDay > $0 }) ?? true { day = eventDay }
        let rows = contacts.rows(for: event, wallTime: wallTime)
        if let overBudgetDay, overBudgetDay == day {
            droppedRows += rows.count
            droppedOverBudget += rows.count
        } else {
            pendingContacts.append(contentsOf: rows)
        }
        if detection.record(event) { detectionChanged = true }
        statistics.record(event, wallTime: wallTime)
        if !rows.isEmpty { statisticsChanged = true }
    }

    /// Rows waiting for the next flush.
    public var pendingRows: Int { pendingContacts.count + endedDays.reduce(0) { $0 + $1.rows.count } }

    /// Writes what changed since the last flush (`now`: the wall clock, Unix seconds): first the
    /// days that ended, each completed and moved into its folder, then the current day; keeps the
    /// directory within ``budgetBytes``; deletes the folders older than ``keepingDays`` (hourly).
    /// Rows that cannot be written are dropped and counted, never kept; `detection.csv` and
    /// `statistics.csv` are written again at the next flush (they are the state itself), and a
    /// day whose files could not move into their folder moves at the next flush (until then the
    /// current day's rows cannot be written and are dropped). Returns what is worth a log line.
    @discardableResult
    public mutating func flush(now: Double) -> [Notice] {
        let directory = directory
        var flush = FlushState()
        var notices: [Notice] = []
        // The days that ended, oldest first; stop at one whose files stay at the top.
        while !endedDays.isEmpty {
            let rows = endedDays[0].rows
            endedDays[0].rows = []
            appendRows(rows, day: endedDays[0].day, &flush, &notices)
            if let text = endedDays[0].detection {
                if flush.attempt({ try Self.replace(directory + "/detection.csv", with: text) }) { endedDays[0].detection = nil }
            }
            if let text = endedDays[0].statistics {
                if flush.attempt({ try Self.replace(directory + "/statistics.csv", with: text) }) { endedDays[0].statistics = nil }
            }
            guard endedDays[0].detection == nil, endedDays[0].statistics == nil,
                flush.attempt({ try Self.moveTopFiles(in: directory, into: &endedDays[0]) })
            else { break }
            endedDays.removeFirst()
        }
        if endedDays.isEmpty {
            if !pendingContacts.isEmpty || access(directory + "/contacts.csv", F_OK) != 0 || budgetBytes != nil {
                let rows = pendingContacts
                pendingContacts.removeAll(keepingCapacity: true)
                appendRows(rows, day: day, &flush, &notices)
            }
            if detectionChanged, flush.attempt({ try Self.replace(directory + "/detection.csv", with: detection.line) }) {
                detectionChanged = false
            }
            if statisticsChanged, flush.attempt({ try Self.replace(directory + "/statistics.csv", with: statistics.content) }) {
                statisticsChanged = false
            }
        } else {
            // The top files still hold an ended day: nothing of the current day can go there.
            // The days after the first wrote nothing: their rows go, and they get no folder.
            flush.dropped += pendingContacts.count + endedDays.dropFirst().reduce(0) { $0 + $1.rows.count }
            pendingContacts.removeAll(keepingCapacity: true)
            endedDays.removeSubrange(1...)
        }
        if let keepingDays, now >= nextPurge {
            if flush.attempt(writing: false, { try purge(now: now, keepingDays: keepingDays) }) { nextPurge = now + 3600 }
        }

        droppedRows += flush.dropped
        if let reason = flush.failure {
            failedFlushes += 1
            if failure == nil {
                notices.append(.failing(droppedRows: flush.dropped, reason: reason))
                droppedWhileFailing = 0
            }
            droppedWhileFailing += flush.dropped
            failure = reason
        } else if failure != nil, flush.wrote {
            notices.append(.writingAgain(droppedRows: droppedWhileFailing))
            failure = nil
            droppedWhileFailing = 0
        }
        return notices
    }

    /// What one flush did: whether something was written, the first failure, the rows dropped.
    private struct FlushState {
        var wrote = false
        var failure: String?
        var dropped = 0

        /// Runs one write (or, with `writing` false, a deletion, which works on a full disk
        /// too: no sign that writes do); true when it worked.
        mutating func attempt(writing: Bool = true, _ body: () throws -> Void) -> Bool {
            do {
                try body()
                if writing { wrote = true }
                return true
            } catch {
                if failure == nil { failure = "\(error)" }
                return false
            }
        }
    }

    /// Appends rows of `day` to the top `contacts.csv` (created with its header when missing or
    /// empty), within the budget: day folders are deleted oldest first to make room, and when
    /// none is left the rows that do not fit are dropped and counted and `day` is over budget
    /// (its later rows are dropped as they come). The rows of a write that fails are dropped.
    private mutating func appendRows(_ rows: [String], day: Int?, _ flush: inout FlushState, _ notices: inout [Notice]) {
        let path = directory + "/contacts.csv"
        var text = (Self.fileSize(path) ?? 0) == 0 ? ContactsLog.header + "\n" : ""
        var fitting = rows.count
        if let budgetBytes {
            let start = text.utf8.count
            let needed = start + rows.reduce(0) { $0 + $1.utf8.count + 1 }
            let (used, foldersLeft) = makeRoom(for: needed, budget: budgetBytes, &flush, &notices)
            if used + needed > budgetBytes {
                var room = budgetBytes - used - start
                if room < 0 { text = "" }
                fitting = 0
                for row in rows {
                    room -= row.utf8.count + 1
                    guard room >= 0 else { break }
                    fitting += 1
                }
                droppedRows += rows.count - fitting
                droppedOverBudget += rows.count - fitting
                // Over budget on its own; a folder that could not be deleted is tried again.
                if foldersLeft == 0, let day, overBudgetDay != day {
                    overBudgetDay = day
                    notices.append(.dayOverBudget(day: Self.name(of: day), budgetBytes: budgetBytes))
                }
            }
        }
        guard fitting > 0 || !text.isEmpty else { return }
        for row in rows.prefix(fitting) {
            text += row
            text += "\n"
        }
        if !flush.attempt({ try Self.append(text, to: path) }) { flush.dropped += fitting }
    }

    /// Deletes day folders, oldest first, until `needed` more bytes fit in `budget` or none is
    /// left; returns the bytes the directory holds then and the day folders left.
    private mutating func makeRoom(for needed: Int, budget: Int, _ flush: inout FlushState, _ notices: inout [Notice]) -> (used: Int, foldersLeft: Int) {
        var (used, folders) = usage()
        var deleted: [String] = []
        for folder in folders where used + needed > budget {
            guard flush.attempt(writing: false, { try Self.remove(directory + "/" + folder.name) }) else { break }
            used -= folder.bytes
            deleted.append(folder.name)
        }
        if !deleted.isEmpty {
            foldersDeletedForBudget += deleted.count
            notices.append(.deletedForBudget(folders: deleted, budgetBytes: budget))
            used = usage().bytes
        }
        return (used, folders.count - deleted.count)
    }

    /// The bytes of the files in the directory and its folders, and the day folders, oldest first.
    private func usage() -> (bytes: Int, folders: [(name: String, bytes: Int)]) {
        var total = 0
        var folders: [(name: String, day: Int, n: Int, bytes: Int)] = []
        for (name, isDirectory, size) in Self.entries(directory) {
            guard isDirectory else {
                total += size
                continue
            }
            let bytes = Self.entries(directory + "/" + name).reduce(0) { $0 + $1.size }
            total += bytes
            if let day = Self.day(named: name) {
                folders.append((name, day, name.count > 11 ? Int(name.dropFirst(11)) ?? 0 : 0, bytes))
            }
        }
        folders.sort { ($0.day, $0.n) < ($1.day, $1.n) }
        return (total, folders.map { ($0.name, $0.bytes) })
    }

    /// The folders of the days whose first moment is at least `keepingDays` days before `now`.
    public func expiredDays(now: Double, keepingDays: Int) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            guard let day = Self.day(named: name) else { return false }
            return Double(day) * 86_400 + Double(keepingDays) * 86_400 <= now
        }.sorted()
    }

    private func purge(now: Double, keepingDays: Int) throws {
        for name in expiredDays(now: now, keepingDays: keepingDays) {
            try Self.remove(directory + "/" + name)
        }
    }

    /// Deletes a file, or a folder with what it holds.
    private static func remove(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw HeraldLogError(path: path, code: errno, deleting: true)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            for entry in entries(path) { try remove(path + "/" + entry.name) }
            guard rmdir(path) == 0 else { throw HeraldLogError(path: path, code: errno, deleting: true) }
        } else {
            guard unlink(path) == 0 else { throw HeraldLogError(path: path, code: errno, deleting: true) }
        }
    }

    /// Moves the three files into the day's folder (`YYYY-MM-DD`, or `YYYY-MM-DD.N` when one
    /// exists already: the clock went back). A folder created by an attempt that failed half way
    /// is used again.
    private static func moveTopFiles(in directory: String, into ended: inout EndedDay) throws {
        if ended.folder == nil {
            let name = name(of: ended.day)
            var folder = directory + "/" + name
            var n = 1
            while access(folder, F_OK) == 0 {
                folder = directory + "/" + name + ".\(n)"
                n += 1
            }
            guard mkdir(folder, 0o700) == 0 else { throw HeraldLogError(path: folder, code: errno) }
            ended.folder = folder
        }
        guard let folder = ended.folder else { return }
        for file in ["contacts.csv", "detection.csv", "statistics.csv"] {
            let from = directory + "/" + file
            guard access(from, F_OK) == 0 else { continue }
            guard rename(from, folder + "/" + file) == 0 else { throw HeraldLogError(path: from, code: errno) }
        }
    }

    static func day(of wallTime: Double) -> Int { Int((wallTime / 86_400).rounded(.down)) }

    /// `YYYY-MM-DD` of a day.
    static func name(of day: Int) -> String { String(HeraldLogFormat.timestamp(Double(day) * 86_400).prefix(10)) }

    /// The day of a folder named `YYYY-MM-DD` (or `YYYY-MM-DD.N`).
    static func day(named name: String) -> Int? {
        guard name.count >= 10 else { return nil }
        let date = name.prefix(10)
        guard name.count == 10 || name.dropFirst(10).first == "." else { return nil }
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.map(\.count) == [4, 2, 2], parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        let civil = CivilDate(year: year, month: month, day: day)
        return civil.isValid ? civil.daysSinceEpoch : nil
    }

    /// The day of the first row of a `contacts.csv` (its time starts `YYYY-MM-DD`).
    static func firstRowDay(_ path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 4096) else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count >= 2 else { return nil }
        return day(named: String(lines[1].prefix(10)))
    }

    /// The entries of a directory (not `.` and `..`): name, whether a directory, bytes.
    private static func entries(_ path: String) -> [(name: String, isDirectory: Bool, size: Int)] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var result: [(String, Bool, Int)] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name != ".", name != ".." else { continue }
            var info = stat()
            guard fstatat(dirfd(dir), name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            result.append((name, isDirectory, isDirectory ? 0 : Int(info.st_size)))
        }
        return result
    }

    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// Appends `text`; when the write fails the file is cut back to its length before, so a
    /// half-written row never stays to be joined by the next one.
    private static func append(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HeraldLogError(path: path, code: errno) }
        defer { close(fd) }
        var info = stat()
        let before = fstat(fd, &info) == 0 ? info.st_size : -1
        do {
            try write(text, to: fd, path: path)
        } catch {
            if before >= 0 { _ = ftruncate(fd, before) }
            throw error
        }
    }

    /// A new file beside `path`, 0600, renamed over it.
    private static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HeraldLogError(path: temporary, code: errno) }
        do {
            try write(text, to: fd, path: temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw HeraldLogError(path: path, code: code)
        }
    }

    private static func write(_ text: String, to fd: Int32, path: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw HeraldLogError(path: path, code: errno)
            }
            offset += n
        }
    }
}

/// A Herald log file that could not be written (or deleted): its path and errno.
public struct HeraldLogError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var deleting = false

    public init(path: String, code: Int32, deleting: Bool = false) {
        self.path = path
        self.code = code
        self.deleting = deleting
    }

    public var description: String { "cannot \(deleting ? "delete" : "write") \(path): \(String(cString: strerror(code)))" }
}
