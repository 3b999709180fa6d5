/// The Herald node's policy settings. Defaults are Herald's (herald.md §1.5) where Herald has one.
/// All durations are seconds.
public struct NodeConfiguration: Hashable, Sendable {
    /// Forget a target not seen for this long (Herald `peripheralCleanInterval`, 30 min).
    public var peripheralCleanInterval: Double = 30 * 60
    /// Forget sooner a target whose payload comes in its adverts (GAEN, a configured advert
    /// protocol): there is nothing to read from it or share with it, so following it longer only
    /// costs memory, and a GAEN phone makes a new target at every identifier rotation (every
    /// 10–20 minutes), which over the clean interval alone would triple the table in a crowd.
    /// Heard again later, it is a new target whose payload is known from its first advert. The
    /// default is the diary's default check-out limit (5 min): a phone unheard for that long has
    /// left as far as the diary is concerned. The smaller of this and `peripheralCleanInterval` applies.
    public var advertTargetCleanInterval: Double = 5 * 60
    /// Follow at most this many targets: a new one then takes the place of the target heard
    /// least recently (without a connection). Memory stays bounded whatever the air brings: a
    /// device that floods adverts from random addresses (cheap "BLE spam" gadgets do hundreds a
    /// second) would otherwise add a target per address for the whole clean interval. Four
    /// times what the 2,000-phone crowd benchmark follows at its peak (about 4,100); phones
    /// heard every second stay, as flood addresses are each heard once.
    public var maximumTargets: Int = 16_384
    /// At most this many connections at once, attempts included (Herald `concurrentConnectionQuota`).
    public var concurrentConnectionQuota: Int = 12
    /// At most this many connection attempts at once: a controller creates one LE connection at
    /// a time, and a queued attempt would eat into its own timeout.
    public var concurrentConnectionAttempts: Int = 1
    /// At most this share of the time goes to connection attempts: a controller does not scan
    /// while it initiates a connection, and back to back attempts in a crowd would leave no time
    /// to hear anyone. After an attempt that took d seconds the next starts d × (1 − share) /
    /// share later: never sooner than one scan interval (`minimumScanBetweenAttempts`), never
    /// later than `maximumScanBetweenAttempts` (an attempt that timed out costs no more).
    /// (Not when the controller scans while it connects: ``SensorNode/controllerScansWhileConnecting``.)
    public var connectingShare: Double = 0.75
    public var minimumScanBetweenAttempts: Double = 0.1
    public var maximumScanBetweenAttempts: Double = 1
    /// Give up a connection attempt after this long (Herald `connectionAttemptTimeout`).
    public var connectionAttemptTimeout: Double = 12
    /// ... or after this long when other targets wait for the controller. A phone answers at its
    /// next advert (Herald phones advertise about every second at the slowest); an address that
    /// stays silent for several intervals has rotated or walked away, and in a crowd a 12 s wait
    /// for it cost a third of the controller's time (crowd-bench).
    public var crowdedConnectionAttemptTimeout: Double = 4
    /// Give up a connected session (discover, read, share) after this long; ATT's own
    /// transaction timeout is 30 s.
    public var connectionSessionTimeout: Double = 30
    /// Wait this long before retrying a target after its first failure; the wait doubles with
    /// each further failure up to `retryBackoffMaximum`.
    public var retryBackoff: Double = 12
    public var retryBackoffMaximum: Double = 5 * 60
    /// After this many failures in a row a target is not connected to again until it is forgotten.
    public var maximumConnectionFailures: Int = 6
    /// Read a known payload again after this long; nil never does (Herald
    /// `payloadDataUpdateTimeInterval`, default never).
    public var payloadUpdateInterval: Double? = nil
    /// Connect only to targets heard this recently: a device can only be connected to while it
    /// advertises.
    public var connectRecency: Double = 10
    /// Write the payloads of other iPhones to iPhones, as Herald Android does.
    public var payloadSharing: Bool = true
    /// Share only payloads of iPhones seen this recently (Herald `payloadSharingExpiryTimeInterval`).
    public var payloadSharingExpiry: Double = 5 * 60
    /// Share with one iPhone at most this often.
    public var payloadSharingInterval: Double = 15
    /// Report other venue beacons (payloads 0x30–0x37) as visitors. Off: a neighbouring beacon
    /// is not a person at the venue.
    public var recordVenueBeacons: Bool = false
    /// Measurements kept per target before its payload is known, spread evenly over the wait
    /// (the first and the latest always kept; see `TargetRecord.buffer`). In a crowd these
    /// buffers were most of the node's memory (128 took 1 KB per unread phone). With 32 the kept
    /// ones are at most about a tenth of the wait apart (measured: a sixteenth to an eleventh):
    /// the diary bridges gaps up to its check-out limit (5 min), so a phone read within about
    /// 50 minutes of arriving keeps its whole visit.
    public var maximumBufferedMeasurements: Int = 32

    public init() {}
}
