import VenueDiary

/// What a replay did (`venue-beacon diary replay` prints it).
public struct ReplaySummary: Sendable, Equatable {
    /// Rows read from the file.
    public var sightings = 0
    /// Sightings weaker than `min_rssi`, ignored.
    public var ignoredWeak = 0
    /// Checked-in visits found (written to the diary unless `recording_days = 0`).
    public var visits = 0
    /// Visits that closed before checking in, never written: identities seen once (never
    /// tracked: `seenOnce`) included.
    public var walkPasts = 0
    /// The diary's admission (see `PresenceTracker.Counters`): identities seen once and never
    /// tracked, of those the ones forgotten before `check_out` because the filter of first
    /// sightings was full (a flood), and pending visits ended to make room in a full tracker.
    public var seenOnce = 0
    public var forgottenEarly = 0
    public var pendingEvicted = 0
    /// Rows whose identifier is a placeholder (Herald's all-zero contact identifier and the
    /// like: `PlaceholderIdentifier`): never visits.
    public var placeholders = 0
    /// Transactions committed.
    public var batches = 0

    public init() {}

    /// Counts the visit changes of one tick (a visit that continues after its check-out checks
    /// out again later, so it is taken back).
    mutating func count(_ changes: [VisitChange]) {
        for change in changes {
            switch change.event {
            case .checkedOut: visits += 1
            case .walkPast: walkPasts += 1
            case .reopened: visits -= 1
            case .checkedIn, .updated: break
            }
        }
    }
}
