/// The node's side of replication as a state machine: which change to send from, when to wait,
/// and when to send again. It holds no data and does no I/O; its driver reads the diary
/// (``VenueDiary/DiaryStore/changes(after:limit:)``), publishes, and tells it what happened.
///
/// Only the hub's acknowledgement (sent after the hub's commit) moves `acked`; a broker's PUBACK
/// counts for nothing. At most `window` batches are ahead of the acknowledgement at any time,
/// so a week's backlog reaches the broker a window at a time, as fast as the hub commits, and
/// never fills the broker's queue for an offline hub. When the acknowledgement does not move
/// for `resendAfter` while batches are out (the hub is away, or the broker dropped a batch),
/// everything above `acked` is sent again, and the wait doubles up to `maximumResendAfter` until
/// the hub makes progress. Duplicates cost nothing at the hub (an idempotent upsert).
public struct ReplicationSender: Sendable {
    public struct Options: Sendable, Equatable {
        /// Visits per batch.
        public var batchSize: Int
        /// Batches ahead of the hub's acknowledgement.
        public var window: Int
        /// No progress for this long with batches out: send again from `acked`.
        public var resendAfter: Double
        public var maximumResendAfter: Double

        public init(batchSize: Int = 200, window: Int = 4, resendAfter: Double = 10, maximumResendAfter: Double = 300) {
            self.batchSize = min(max(1, batchSize), VisitBatch.maximumVisits)
            self.window = max(1, window)
            self.resendAfter = resendAfter
            self.maximumResendAfter = max(resendAfter, maximumResendAfter)
        }
    }

    public let diary: String
    public let options: Options
    /// Every change up to this one is at the hub.
    public private(set) var acked: Int64
    /// The last change sent in this round (the next batch starts after it).
    public private(set) var cursor: Int64
    /// The last change of each batch out, oldest first.
    public private(set) var outstanding: [Int64] = []
    public private(set) var connected = false
    /// The diary had nothing above `cursor` when last asked.
    public private(set) var caughtUp = false
    /// Batches sent, and rounds sent again, since the start.
    public private(set) var batchesSent = 0
    public private(set) var resends = 0
    private var waitingSince: Double = 0
    private var wait: Double

    /// `acked`: what the node last heard from the hub for this diary (0 if nothing).
    public init(diary: String, acked: Int64, options: Options = Options()) {
        self.diary = diary
        self.options = options
        self.acked = acked
        self.cursor = acked
        self.wait = options.resendAfter
    }

    /// The broker session is up: everything above `acked` is sent (again).
    public mutating func connected(now: Double) {
        connected = true
        rewind(now: now)
    }

    public mutating func disconnected() {
        connected = false
        outstanding.removeAll()
    }

    /// The change after which the next batch starts, or nil: not connected, the window is
    /// full, or the diary had nothing more (until ``diaryChanged()``).
    public func nextBatch() -> Int64? {
        guard connected, !caughtUp, outstanding.count < options.window else { return nil }
        return cursor
    }

    /// A batch from `nextBatch()`'s change to `last` was published (`last` equal to it: the
    /// diary had nothing above it).
    public mutating func sent(last: Int64, now: Double) {
        guard last > cursor else {
            caughtUp = true
            return
        }
        if outstanding.isEmpty { waitingSince = now }
        outstanding.append(last)
        cursor = last
        batchesSent += 1
    }

    /// The diary has new changes: look again.
    public mutating func diaryChanged() { caughtUp = false }

    /// The hub's acknowledgement. Another diary's is ignored (the file was replaced); a lower
    /// one than before means the hub lost visits (its store was replaced): they are sent again.
    /// Returns whether `acked` moved.
    @discardableResult
    public mutating func received(_ ack: HubAck, now: Double) -> Bool {
        guard ack.diary == diary, ack.acked != acked else { return false }
        if ack.acked < acked {
            acked = ack.acked
            rewind(now: now)
            return true
        }
        acked = ack.acked
        outstanding.removeAll { $0 <= acked }
        if cursor < acked { cursor = acked }
        waitingSince = now
        wait = options.resendAfter
        return true
    }

    /// When the driver must call ``tick(now:)`` next if nothing else happens; nil: no deadline.
    public var deadline: Double? { outstanding.isEmpty ? nil : waitingSince + wait }

    /// Sends again from `acked` when the hub made no progress for the wait. Returns whether it
    /// did.
    @discardableResult
    public mutating func tick(now: Double) -> Bool {
        guard connected, let deadline, now >= deadline else { return false }
        resends += 1
        wait = min(wait * 2, options.maximumResendAfter)
        rewind(now: now)
        return true
    }

    private mutating func rewind(now: Double) {
        cursor = acked
        outstanding.removeAll()
        caughtUp = false
        waitingSince = now
    }
}
