import Sightings

// The venue diary: who was present at the venue, when, recorded on the venue side.
//
// Public surface, bottom up:
//
//   DiarySettings          check-in/check-out limits, min RSSI, max visit, recording and share days
//   PresenceTracker        pure state machine: sightings → visits (pending, checked in, closed)
//     key(for:payload:) → VisitKey, record(key,time:rssi:), sight(kind,payload:time:rssi:) → VisitKey?
//     (admission: tracked from the second sighting, opened at the first), record(Sighting),
//     attribute([RSSISample], to: key), advance(to:), closeAll(), takeChanges(includingUpdates:)
//   DiaryStore             the SQLite file: identity check, migrations, queries, stats, purge
//     init(path:readOnly:), visits(in:), forEachVisit(in:_:), openVisits(), visit(id:),
//     stats(), purge(now:recordingDays:), save(_:)
//   VenueDiary             the one owner of the live path: tracker + batched writer
//     init(store:settings:now:policy:), key/record/attribute, tick(now:), flush(now:),
//     close(now:checkingOutOpenVisits:), purge(now:)
//   DiaryExport            share window, CSV and JSON (pure formatters and a streaming export)
//   SightingsCSV           parser of sightings files (`time,kind,payload,rssi`)
//   SightingsFile          a sightings file checked whole, then read in time order without holding it
//                          (replayed by VenueNode's SightingsReplay, through the node's DiaryPipeline)
//
// Times are wall-clock Unix seconds as Double everywhere; nothing here reads a clock.

/// The owner of the live diary: a presence tracker and the batched writer of one diary file.
///
/// Feed it sightings (by key on the hot path), call ``tick(now:)`` from a clock (about once a
/// second), and ``close(now:checkingOutOpenVisits:)`` at shutdown. Writes happen only in
/// ``tick(now:)``, ``flush(now:)`` and ``close(now:checkingOutOpenVisits:)``, each one
/// transaction: with ``FlushPolicy/live``, check-ins (and check-outs with them) within 2 minutes
/// and open visits' progress every 10 minutes, so a crash or power cut loses at most the
/// check-ins of the last 2 minutes, shortens open visits by at most 10, and never corrupts the
/// file; that keeps the card's writes under 1 MB per venue hour at 300 visits an hour. With
/// `recording_days = 0` nothing is written.
///
/// Its methods block on SQLite while they write: run it on a thread of its own, not on the
/// cooperative pool. It is a value with one owner; do not copy it to share it.
public struct VenueDiary {
    public let settings: DiarySettings
    public let policy: FlushPolicy
    public var store: DiaryStore { writer.store }
    /// The presence state (read-only outside; changes go through the diary so they get written).
    public private(set) var tracker: PresenceTracker
    private var writer: DiaryWriter
    /// Changes waiting for the next flush (never walk-pasts).
    private var pending: [VisitChange] = []
    /// When the oldest check-in waiting to be written happened (diary time); nil when none waits.
    private var pendingCheckInSince: Double?
    private var lastFlush: Double

    /// What opening found in the diary: open visits resumed, and open visits closed because
    /// their last sighting was more than `checkOut` before `now` (closed at that sighting).
    public private(set) var resumedVisits = 0
    public private(set) var closedStaleVisits = 0

    /// Opens the live diary at `now`: open visits unseen for longer than the check-out limit are
    /// closed at their last sighting, the others are resumed so a restart does not split them.
    ///
    /// `clock` says whether `now` and the times to come are from a synchronised clock; see
    /// ``DiaryClock`` and ``synchronise(bootID:wallMinusBoot:)``.
    public init(store: DiaryStore, settings: DiarySettings, now: Double, policy: FlushPolicy = .live, clock: DiaryClock = .synchronised) throws {
        try self.init(store: store, settings: settings, now: now, policy: policy, clock: clock, resumingOpenVisits: true)
    }

    /// `resumingOpenVisits: false` (a replay, which is not a restart): open visits already in the
    /// diary are left as they are, neither resumed nor closed.
    public init(
        store: DiaryStore, settings: DiarySettings, now: Double, policy: FlushPolicy, clock: DiaryClock = .synchronised,
        resumingOpenVisits: Bool
    ) throws {
        self.settings = settings
        self.policy = policy
        tracker = PresenceTracker(settings: settings)
        writer = DiaryWriter(store: store, clock: clock)
        lastFlush = now
        if resumingOpenVisits && settings.isRecording {
            try recover(now: now, clock: clock)
        }
    }

    /// How far two readings of `wall − CLOCK_BOOTTIME` may differ and still be one clock (they
    /// are taken at different moments, a few microseconds apart; nothing slews an unsynchronised
    /// clock). Another boot's reading differs by at least that boot's uptime.
    static let sameClockTolerance = 1.0

    /// Resumes open visits recorded on the same clock as now (synchronised, or unsynchronised in
    /// this boot with the same `wall − CLOCK_BOOTTIME`), so a restart does not split them; closes
    /// the others at their last sighting: those unseen for longer than the check-out limit, at
    /// the maximum length, or recorded on another clock (their times and ours do not line up:
    /// another boot, or the clock was set by hand since). A last sighting on disk may be up to
    /// the policy's interval old (a present phone's is rewritten at each commit; a power cut
    /// loses what came since), so "unseen" counts from that much after it; a resumed visit not
    /// seen again within the check-out limit of the restart is closed at that last sighting.
    private mutating func recover(now: Double, clock: DiaryClock) throws {
        var stale: [Visit] = []
        for (visit, visitClock) in try store.openVisitsWithClock() {
            guard let id = visit.id else { continue }
            let unseen = now - visit.lastSeen > settings.checkOutSeconds + policy.interval
            let tooLong = visit.lastSeen - visit.checkIn >= settings.maxVisitSeconds
            let sameClock: Bool
            switch clock {
            case .synchronised:
                sameClock = visitClock == nil
            case .unsynchronised(let bootID, let wallMinusBoot):
                sameClock = visitClock.map {
                    $0.bootID == bootID && abs($0.wallMinusBoot - wallMinusBoot) <= Self.sameClockTolerance
                } ?? false
            }
            if !unseen, !tooLong, sameClock, let key = tracker.resume(visit, now: now) {
                writer.resumed(key, StoredVisit(id: id, checkIn: visit.checkIn))
                resumedVisits += 1
            } else {
                stale.append(visit)
            }
        }
        guard !stale.isEmpty else { return }
        try store.database.write { db in
            // Closed at the last sighting: the visit row takes the newest state, its progress goes.
            let statements = try VisitStatements(db, clock: clock)
            for visit in stale {
                guard let id = visit.id else { continue }
                var closed = visit
                closed.checkOut = visit.lastSeen
                _ = try statements.update(StoredVisit(id: id, checkIn: visit.checkIn), to: closed)
            }
        }
        closedStaleVisits = stale.count
    }

    // MARK: Input (never writes)

    /// The key for an identity; see ``PresenceTracker/key(for:payload:metadata:)``.
    public mutating func key(for kind: PayloadKind, payload: [UInt8], metadata: [UInt8]? = nil) -> VisitKey {
        tracker.key(for: kind, payload: payload, metadata: metadata)
    }

    /// A measurement by value, through admission; see
    /// ``PresenceTracker/sight(_:payload:metadata:time:rssi:)``. Nil: remembered, not tracked yet.
    public mutating func sight(_ kind: PayloadKind, payload: [UInt8], metadata: [UInt8]? = nil, time: Double, rssi: Int?) -> VisitKey? {
        tracker.sight(kind, payload: payload, metadata: metadata, time: time, rssi: rssi)
    }

    /// See ``PresenceTracker/record(_:time:rssi:carrier:)``.
    @discardableResult
    public mutating func record(_ key: VisitKey, time: Double, rssi: Int?, carrier: UInt32 = 0) -> Bool {
        tracker.record(key, time: time, rssi: rssi, carrier: carrier)
    }

    /// See ``PresenceTracker/attribute(_:to:)``.
    @discardableResult
    public mutating func attribute(_ samples: [RSSISample], to key: VisitKey) -> Bool {
        tracker.attribute(samples, to: key)
    }

    // MARK: Clock and writes

    /// The clock new visits are stamped with.
    public var clock: DiaryClock { writer.clock }

    /// The synchronised wall clock has stepped (``DiaryKeeper`` holds diary time on the steady
    /// clock meanwhile): new visits are stamped with boot `bootID` and `wallMinusBoot` (the
    /// reading diary time still follows), so that ``synchronise(bootID:wallMinusBoot:)`` corrects
    /// them if the step is followed after all, and leaves them as they are (a step of 0) if the
    /// clock comes back.
    public mutating func desynchronise(bootID: String, wallMinusBoot: Double) {
        writer.desynchronise(bootID: bootID, wallMinusBoot: wallMinusBoot)
    }

    /// The system clock of boot `bootID` has just been synchronised; its `wall − CLOCK_BOOTTIME`
    /// is now `wallMinusBoot`. Writes what waits, then corrects, in the same transaction, the
    /// times of every stored visit recorded before sync in this boot (by this process or an
    /// earlier one), moves the tracker's times by the same step so open visits continue, and
    /// stamps new visits as synchronised from now on. Pass times after the step from now on.
    ///
    /// When the diary was opened synchronised, nothing moves in memory; stored visits of this
    /// boot left marked by an earlier process (it stopped before it saw sync) are corrected.
    @discardableResult
    public mutating func synchronise(bootID: String, wallMinusBoot: Double) throws -> ClockCorrection {
        var step = 0.0
        if case .unsynchronised(let boot, let before) = writer.clock, boot == bootID {
            step = wallMinusBoot - before
        }
        enqueue(tracker.takeChanges(includingUpdates: true), now: lastFlush)
        let counts = try writer.synchronise(bootID: bootID, wallMinusBoot: wallMinusBoot, step: step, after: pending)
        pending.removeAll(keepingCapacity: true)
        pendingCheckInSince = nil
        tracker.shiftTimes(by: step)
        lastFlush += step
        return ClockCorrection(step: step, correctedVisits: counts.corrected, uncorrectableVisits: counts.uncorrectable)
    }

    /// Closes visits unseen for longer than the check-out limit and writes when the policy says
    /// so. Returns the check-ins, check-outs and walk-pasts since the last call (for logs and
    /// LEDs). If the write fails, the changes are kept for the next attempt and the error thrown.
    @discardableResult
    public mutating func tick(now: Double) throws -> [VisitChange] {
        tracker.advance(to: now)
        let changes = tracker.takeChanges(includingUpdates: false)
        enqueue(changes, now: now)
        if now - lastFlush >= policy.interval || pending.count >= policy.maxPendingChanges {
            try write(now: now, includingUpdates: true)
        } else if let since = pendingCheckInSince, now - since >= policy.checkInsWithin {
            // Only the transitions: refreshing every open visit waits for the interval.
            try write(now: now, includingUpdates: false)
        }
        return changes
    }

    /// Writes everything now: waiting changes and the current state of every changed open visit.
    /// Returns the transitions it took from the tracker (as ``tick(now:)`` would have).
    @discardableResult
    public mutating func flush(now: Double) throws -> [VisitChange] {
        let changes = tracker.takeChanges(includingUpdates: false)
        enqueue(changes, now: now)
        try write(now: now, includingUpdates: true)
        return changes
    }

    /// The final flush at shutdown. Open visits stay open in the diary (they are resumed or
    /// closed at the next start) unless `checkingOutOpenVisits`, which closes every open visit at
    /// its last sighting as if time ran on past the check-out limit (the end of a replay).
    @discardableResult
    public mutating func close(now: Double, checkingOutOpenVisits: Bool = false) throws -> [VisitChange] {
        tracker.advance(to: now)
        if checkingOutOpenVisits { tracker.closeAll() }
        return try flush(now: now)
    }

    /// Applies retention (see ``DiaryStore/purge(now:recordingDays:)``); the node's diary
    /// pipeline calls it at start and hourly on the diary's clock, synchronised or not (see
    /// `DiaryPipeline.tick(now:)`). Returns the visits deleted.
    @discardableResult
    public func purge(now: Double) throws -> Int {
        try store.purge(now: now, recordingDays: settings.recordingDays)
    }

    /// Transactions committed so far.
    public var committedBatches: Int { writer.batches }

    private mutating func enqueue(_ changes: [VisitChange], now: Double) {
        guard settings.isRecording else { return }
        for change in changes where change.event != .walkPast {
            pending.append(change)
            if change.event == .checkedIn && pendingCheckInSince == nil { pendingCheckInSince = now }
        }
    }

    private mutating func write(now: Double, includingUpdates: Bool) throws {
        if includingUpdates {
            lastFlush = now
            enqueue(tracker.takeChanges(includingUpdates: true), now: now)
        }
        guard !pending.isEmpty else { return }
        try writer.apply(pending)
        pending.removeAll(keepingCapacity: true)
        pendingCheckInSince = nil
    }
}
