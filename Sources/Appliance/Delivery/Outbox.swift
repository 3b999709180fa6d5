import Foundation
import Glibc

/// How long to wait before retrying a failed hand-off: `first`, doubling per failure, at most `maximum`.
public struct RetryPolicy: Sendable, Equatable {
    public var first: TimeInterval
    public var maximum: TimeInterval

    public init(first: TimeInterval, maximum: TimeInterval) {
        self.first = first
        self.maximum = maximum
    }

    public func delay(afterFailures failures: Int) -> TimeInterval {
        let doublings = min(max(failures - 1, 0), 40)
        return min(first * pow(2, Double(doublings)), maximum)
    }
}

/// One message waiting in the outbox.
public struct OutboxEntry: Sendable, Equatable {
    /// The file name without extension, oldest first when sorted.
    public var id: String
    public var messageID: String
    public var attempts: Int
    public var nextAttempt: Date
    public var lastError: String?
    /// The earliest check-out among the visits the message carries (when it was queued by this
    /// version; older messages count from when they were queued): with the diary's retention
    /// it says when the message must go.
    public var earliestVisitEnd: Date?
}

/// What happened to an email handed to the outbox.
public enum EmailOutcome: Sendable, Equatable {
    /// sendmail accepted it; it has left the outbox.
    case delivered(messageID: String)
    /// sendmail did not take it; it waits in the outbox for `nextAttempt`.
    case queued(messageID: String, reason: String, nextAttempt: Date)
    /// It could not even be stored in the outbox (nothing was handed off).
    case notStored(reason: String)
}

/// What one retry pass did.
public struct RetryReport: Sendable, Equatable {
    public var delivered: [String] = []
    public var failed: [OutboxEntry] = []
    /// Messages still waiting after the pass.
    public var waiting: Int = 0
    /// When the earliest waiting message is due.
    public var nextDue: Date?
    /// Messages dropped undelivered because the visits they carry passed the diary's retention.
    public var expired: [OutboxEntry] = []
    /// A problem with the outbox itself (it could not be read).
    public var problem: String?
}

/// Emails that have not yet been accepted by sendmail, as files in a directory.
///
/// Every message is stored (written atomically) *before* its first hand-off and removed only
/// after sendmail accepted it, so a failed hand-off, a crash or a power cut loses nothing; the
/// stored bytes never change, so the Message-ID is the same on every attempt. A crash in the
/// short window after sendmail accepted a message but before the file was removed makes the
/// next pass hand it off again: the choice is at-least-once, because a lost export is worse
/// for contact tracing than a duplicate, and the duplicate carries the same Message-ID, which
/// mail systems and readers use to recognise it.
///
/// Retention: a message carries visits, and nothing on the node may keep a visit longer than
/// the diary does (`recording_days`). A message whose earliest visit end is older than the
/// retention is deleted undelivered by every pass (``retryDue(now:force:)``, ``purge(now:)``),
/// before any hand-off; `recording_days = 0` keeps nothing.
///
/// Layout: `ID.eml` (the message, immutable, 0600), `ID.state` (JSON: attempts, next attempt,
/// last error, earliest visit end; 0600), `.lock` (flock: one process at a time hands off, so
/// the service and `venue-beacon outbox retry` never send the same message twice).
public final class Outbox: Sendable {
    /// Told what a writer waits for, when it has to wait for another process.
    public typealias WaitNotice = @Sendable (String) -> Void

    public let directory: String
    public let transport: any MailTransport
    public let policy: RetryPolicy
    /// How long a visit may be kept (the diary's `recording_days`); nil: forever.
    public let retention: TimeInterval?
    /// File work, locking and hand-offs block: they run here, not on the cooperative pool.
    private let queue = DispatchQueue(label: "venue-beacon.outbox")

    public init(directory: String, transport: any MailTransport, policy: RetryPolicy, retention: TimeInterval? = nil) {
        self.directory = directory
        self.transport = transport
        self.policy = policy
        self.retention = retention
    }

    /// Stores `email` and hands it off once. On failure it stays queued for `retryDue`.
    /// `earliestVisitEnd`: see ``OutboxEntry/earliestVisitEnd``.
    public func send(_ email: ExportEmail, now: Date, earliestVisitEnd: Date? = nil) async -> EmailOutcome {
        await onQueue { [self] in
            do {
                let lock = try self.lock()
                defer { close(lock) }
                let id = Self.newID(now)
                let entry = OutboxEntry(
                    id: id, messageID: email.messageID, attempts: 0, nextAttempt: now, lastError: nil, earliestVisitEnd: earliestVisitEnd)
                // The state first: a message file never exists without its retention known.
                try AtomicFile.write(StoredState(entry).encoded, to: path(id, "state"), mode: 0o600)
                try AtomicFile.write(email.bytes, to: path(id, "eml"), mode: 0o600)
                if let failed = attempt(entry, now: now) {
                    return .queued(messageID: email.messageID, reason: failed.lastError ?? "", nextAttempt: failed.nextAttempt)
                }
                return .delivered(messageID: email.messageID)
            } catch {
                return .notStored(reason: "cannot store the email in the outbox: \(error)")
            }
        }
    }

    /// Hands off every message whose next attempt is due at `now`. The service calls this
    /// periodically; `venue-beacon outbox retry` calls it with `force` (everything, now).
    /// `waiting`: told, once, when another process holds the outbox and this call waits for it.
    public func retryDue(now: Date, force: Bool = false, waiting: WaitNotice? = nil) async -> RetryReport {
        await onQueue { [self] in
            var report = RetryReport()
            do {
                let lock = try self.lock(waiting: waiting)
                defer { close(lock) }
                for var entry in try scan() {
                    if isExpired(entry, now: now) {
                        remove(entry)
                        report.expired.append(entry)
                        continue
                    }
                    guard force || entry.nextAttempt <= now else {
                        report.waiting += 1
                        report.nextDue = min(report.nextDue ?? entry.nextAttempt, entry.nextAttempt)
                        continue
                    }
                    if force { entry.nextAttempt = now }
                    if let failed = attempt(entry, now: now) {
                        report.failed.append(failed)
                        report.waiting += 1
                        report.nextDue = min(report.nextDue ?? failed.nextAttempt, failed.nextAttempt)
                    } else {
                        report.delivered.append(entry.messageID)
                    }
                }
            } catch {
                report.problem = "cannot read the outbox: \(error)"
            }
            return report
        }
    }

    /// Deletes, undelivered, every message carrying a visit older than the retention.
    public func purge(now: Date, waiting: WaitNotice? = nil) async throws(FileSystemError) -> [OutboxEntry] {
        let result: Result<[OutboxEntry], FileSystemError> = await onQueue { [self] in
            // An outbox that is not there holds nothing to purge (and is not made for that).
            if isAbsent { return .success([]) }
            do throws(FileSystemError) {
                let lock = try self.lock(waiting: waiting)
                defer { close(lock) }
                let expired = try scan().filter { isExpired($0, now: now) }
                for entry in expired { remove(entry) }
                return .success(expired)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Deletes one message, delivered or not (`venue-beacon outbox drop ID`). Returns it, or nil
    /// when no message has that id.
    public func drop(id: String, waiting: WaitNotice? = nil) async throws(FileSystemError) -> OutboxEntry? {
        let result: Result<OutboxEntry?, FileSystemError> = await onQueue { [self] in
            do throws(FileSystemError) {
                let lock = try self.lock(waiting: waiting)
                defer { close(lock) }
                guard let entry = try scan().first(where: { $0.id == id }) else { return .success(nil) }
                remove(entry)
                return .success(entry)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The messages waiting, oldest first. Reading never waits for the lock: files appear and
    /// go only by rename and unlink, so a reader sees each message whole or not at all, even
    /// while another process hands one to sendmail.
    public func entries() async throws(FileSystemError) -> [OutboxEntry] {
        let result: Result<[OutboxEntry], FileSystemError> = await onQueue { [self] in
            if isAbsent { return .success([]) }
            do throws(FileSystemError) {
                return .success(try scan(cleaning: false))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: - On the queue, holding the lock

    /// One hand-off. Returns nil when delivered (and removed), else the entry as now stored.
    private func attempt(_ entry: OutboxEntry, now: Date) -> OutboxEntry? {
        let started = ContinuousClock.now
        do {
            try transport.handOff(messageAt: path(entry.id, "eml"))
        } catch {
            var failed = entry
            failed.attempts += 1
            failed.lastError = error.reason
            // The wait counts from when the hand-off ended (a hanging sendmail takes minutes),
            // in whole seconds, so the time stored in the state file reads back exactly.
            let took = Double(started.duration(to: .now).components.seconds)
            let next = (now.timeIntervalSince1970 + took + policy.delay(afterFailures: failed.attempts)).rounded(.up)
            failed.nextAttempt = Date(timeIntervalSince1970: next)
            // If even this write fails the message is still there and counts as due: nothing is lost.
            try? AtomicFile.write(StoredState(failed).encoded, to: path(entry.id, "state"), mode: 0o600)
            return failed
        }
        remove(entry)
        return nil
    }

    /// Whether the visits `entry` carries have outlived the retention. Messages queued by
    /// versions that did not record their visits' ends count from when they were queued.
    private func isExpired(_ entry: OutboxEntry, now: Date) -> Bool {
        guard let retention else { return false }
        guard let since = entry.earliestVisitEnd ?? Self.queuedAt(entry.id) else { return retention == 0 }
        return now.timeIntervalSince(since) > retention || retention == 0
    }

    /// Removing the message is the commit point; the state file is only bookkeeping.
    private func remove(_ entry: OutboxEntry) {
        unlink(path(entry.id, "eml"))
        unlink(path(entry.id, "state"))
        try? AtomicFile.syncDirectory(directory)
    }

    /// Messages in the outbox, oldest first; removes leftovers of interrupted writes and
    /// state files whose message is gone.
    /// `cleaning`: also delete leftovers of interrupted writes (only while holding the lock).
    private func scan(cleaning: Bool = true) throws(FileSystemError) -> [OutboxEntry] {
        let names = try Self.list(directory)
        let messages = Set(names.filter { $0.hasSuffix(".eml") && !$0.hasPrefix(".") }.map { String($0.dropLast(4)) })
        for name in names where cleaning {
            let stale = (name.hasPrefix(".") && name.contains(".tmp-"))
                || (name.hasSuffix(".state") && !messages.contains(String(name.dropLast(6))))
            if stale { unlink((directory as NSString).appendingPathComponent(name)) }
        }
        return messages.sorted().map { id in
            let state = (try? Data(contentsOf: URL(fileURLWithPath: path(id, "state")))).flatMap(StoredState.decode)
            return OutboxEntry(
                id: id, messageID: Self.messageID(inFile: path(id, "eml")) ?? "(unknown)",
                attempts: state?.attempts ?? 0,
                nextAttempt: Date(timeIntervalSince1970: state?.nextAttempt ?? 0),
                lastError: state.flatMap { $0.lastError.isEmpty ? nil : $0.lastError },
                earliestVisitEnd: state?.earliestVisitEnd.map(Date.init(timeIntervalSince1970:)))
        }
    }

    /// Creates the outbox if needed and takes its lock (blocking until another process is done).
    /// The directory does not exist: nothing was ever queued here.
    private var isAbsent: Bool {
        var info = stat()
        return lstat(directory, &info) != 0 && errno == ENOENT
    }

    private func lock(waiting: WaitNotice? = nil) throws(FileSystemError) -> Int32 {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw FileSystemError(operation: "create", path: directory, code: errno)
        }
        let lockPath = (directory as NSString).appendingPathComponent(".lock")
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileSystemError(operation: "open", path: lockPath, code: errno) }
        if let waiting, flock(fd, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK {
            waiting(
                "waiting for the outbox \(directory): another process (the service, or another venue-beacon command) "
                    + "is handing an email to sendmail, which is stopped after at most 5 minutes")
        }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let code = errno
            close(fd)
            throw FileSystemError(operation: "lock", path: lockPath, code: code)
        }
        return fd
    }

    static func list(_ directory: String) throws(FileSystemError) -> [String] {
        guard let dir = opendir(directory) else { throw FileSystemError(operation: "list", path: directory, code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    private func path(_ id: String, _ ext: String) -> String {
        (directory as NSString).appendingPathComponent("\(id).\(ext)")
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    /// When the message with this id was queued (the time in its id).
    static func queuedAt(_ id: String) -> Date? {
        let digits = id.prefix(16).filter(\.isNumber).compactMap { Int(String($0)) }
        guard digits.count == 14 else { return nil }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + $1 } }
        var components = DateComponents()
        (components.year, components.month, components.day) = (number(0..<4), number(4..<6), number(6..<8))
        (components.hour, components.minute, components.second) = (number(8..<10), number(10..<12), number(12..<14))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)
    }

    /// `20260115T100000Z-1a2b3c4d`: sorts by creation time, unique per message.
    static func newID(_ now: Date) -> String {
        let p = UTCDate.parts(now)
        let stamp = "\(UTCDate.pad(p.year, 4))\(UTCDate.pad(p.month))\(UTCDate.pad(p.day))T\(UTCDate.pad(p.hour))\(UTCDate.pad(p.minute))\(UTCDate.pad(p.second))Z"
        return stamp + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }

    /// The Message-ID header of a stored message (for listings and reports).
    static func messageID(inFile path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = String(decoding: handle.readData(ofLength: 8192), as: UTF8.self)
        for line in head.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            if line.lowercased().hasPrefix("message-id:") {
                return line.dropFirst("message-id:".count).trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}

/// The `.state` file beside a message.
private struct StoredState: Codable {
    var attempts: Int
    var nextAttempt: Double
    var lastError: String
    var earliestVisitEnd: Double?

    init(_ entry: OutboxEntry) {
        attempts = entry.attempts
        nextAttempt = entry.nextAttempt.timeIntervalSince1970
        lastError = entry.lastError ?? ""
        earliestVisitEnd = entry.earliestVisitEnd?.timeIntervalSince1970
    }

    var encoded: Data { (try? JSONEncoder().encode(self)) ?? Data() }

    static func decode(_ data: Data) -> StoredState? { try? JSONDecoder().decode(StoredState.self, from: data) }
}
