/// The diary's behaviour, as the `[diary]` section of the config file sets it.
public struct DiarySettings: Sendable, Equatable {
    /// A visit is checked in once `last − first > checkInSeconds` (strictly greater, as Herald).
    public var checkInSeconds: Double
    /// A gap between sightings longer than this closes a visit at its last sighting.
    public var checkOutSeconds: Double
    /// Sightings weaker than this (dBm) are ignored entirely; nil counts every sighting.
    public var minRSSI: Int?
    /// A visit whose `last − first` reaches this is closed there; the next sighting opens a new one.
    public var maxVisitSeconds: Double
    /// Finished visits older than this many days are purged; nil keeps them forever; 0 records
    /// nothing and purges everything.
    public var recordingDays: Int?
    /// What an export shares by default.
    public var shareWindow: ShareWindow

    public init(
        checkInSeconds: Double = 120, checkOutSeconds: Double = 300, minRSSI: Int? = nil,
        maxVisitSeconds: Double = 12 * 3600, recordingDays: Int? = 31, shareWindow: ShareWindow = .days(14)
    ) {
        self.checkInSeconds = checkInSeconds
        self.checkOutSeconds = checkOutSeconds
        self.minRSSI = minRSSI
        self.maxVisitSeconds = maxVisitSeconds
        self.recordingDays = recordingDays
        self.shareWindow = shareWindow
    }

    /// Whether anything may be written to the diary (`recording_days = 0` records nothing).
    public var isRecording: Bool { recordingDays != 0 }

    /// An open visit unseen for longer than this is abandoned (a replay killed or failed, a
    /// service that stopped without closing it): no live service holds it. A running service
    /// checks a visit out within the check-out limit and commits within ``FlushPolicy/live``'s
    /// interval, and rewrites a present phone's last sighting at every commit, so twice that
    /// interval past the limit, nothing live is left.
    public var abandonedAfter: Double { checkOutSeconds + 2 * FlushPolicy.live.interval }
}

/// Which visits a share export contains.
public enum ShareWindow: Sendable, Equatable {
    /// Visits overlapping `[now − days, now]`; `.days(0)` shares nothing (exports are refused).
    case days(Int)
    /// Every visit in the diary.
    case all
}

/// When the diary owner commits what the tracker produced. Every flush is one transaction.
public struct FlushPolicy: Sendable, Equatable {
    /// Everything, open visits' progress included, is written at least this often (seconds of
    /// the diary clock).
    public var interval: Double
    /// A flush is forced once this many visit changes wait (bounds memory and batch size).
    public var maxPendingChanges: Int
    /// A check-in is committed at most this long after it happened (with whatever check-outs
    /// wait); 0 commits it at the next tick. Never later than `interval`.
    public var checkInsWithin: Double

    public init(interval: Double, maxPendingChanges: Int, checkInsWithin: Double) {
        self.interval = interval
        self.maxPendingChanges = maxPendingChanges
        self.checkInsWithin = checkInsWithin
    }

    /// The live service: check-ins (and check-outs with them) within 2 minutes, open visits'
    /// progress every 10 minutes. Each fsync'd commit costs the SD card at least a few pages,
    /// and refreshing a crowd's open visits rewrites many: committing every check-in at the next
    /// tick and refreshing every 30 s cost 18 MB per venue hour at 300 visits an hour, this
    /// policy under 1 MB (BENCHMARKS.md, "Disk writes per venue hour"). A power cut loses at
    /// most the check-ins of the last 2 minutes and shortens open visits by at most 10; a clean
    /// stop writes everything.
    public static let live = FlushPolicy(interval: 600, maxPendingChanges: 10_000, checkInsWithin: 120)
    /// Replaying a file: one transaction per 1,000 visit changes or per hour of replayed time.
    public static let replay = FlushPolicy(interval: 3600, maxPendingChanges: 1_000, checkInsWithin: 3600)
}
