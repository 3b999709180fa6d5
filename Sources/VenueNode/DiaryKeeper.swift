import Herald
import VenueDiary

/// The venue node's diary loop, without I/O of its own beyond the diary and the Herald-format
/// logs it owns: the one place where the diary's timing is decided, for `venue-beacon run`
/// (``Recorder`` in Appliance, on a thread of its own because SQLite blocks) and the simulated
/// venue (`VenueRun`) alike.
///
/// It owns the ``DiaryPipeline`` and the Herald logs, and decides:
/// - the diary's clock: while the system clock is not synchronised, diary time runs on the steady
///   clock from the wall time at start (``DiaryClock``), so a step of the wall clock cannot split
///   visits, and new visits are stamped with the boot and `wall − CLOCK_BOOTTIME`; when sync is
///   first seen, the step is measured and every visit this boot recorded before is corrected in
///   one transaction (retried every tick when it fails); from then on diary time is wall time,
///   but for a step of the synchronised clock (more than ``wallStepTolerance``, a bad time server
///   or a clock set by hand): diary time then stays on the steady clock, and new visits are
///   marked as before a sync, until the wall clock comes back (nothing to correct) or the step
///   has stood for ``wallStepHold`` (then it is followed as a sync is: the marked visits and the
///   open ones move by the step), so a step and its return split no visit;
/// - what a tick does: visits closed, check-ins committed within `commit_seconds`, retention at
///   the first tick and hourly (``DiaryPipeline``), Herald logs flushed every 10 s;
/// - failures: a diary write that fails is retried at the next tick, logged once until it works
///   again; a diary damaged under the service is never written again (``tick(steady:wall:synchronisation:)``
///   throws); Herald-log rows that cannot be written are dropped and counted (``HeraldLogWriter``),
///   logged once per run of failures and again when the logs are written again;
/// - what is worth a log line: check-ins and check-outs with a short payload id, corrections,
///   purges, events dropped on the way in, and once a minute what the diary's admission dropped
///   when that looks like a flood (``Admission``).
///
/// Its owner feeds it the node's sensor events and a tick about once a second, each with the
/// steady time of the node and the wall time, and carries the ``Notice``s to the log and LEDs.
public struct DiaryKeeper {
    public enum Notice: Sendable {
        case log(LogLine)
        /// Check-ins, check-outs and the rest, for the LEDs.
        case visits([VisitChange])
    }

    /// What a clock reading says about the boot when the system clock is synchronised.
    public struct BootReading: Sendable, Equatable {
        public var bootID: String
        /// Unix seconds minus CLOCK_BOOTTIME.
        public var wallMinusBoot: Double

        public init(bootID: String, wallMinusBoot: Double) {
            self.bootID = bootID
            self.wallMinusBoot = wallMinusBoot
        }
    }

    public struct Counters: Sendable, Equatable {
        public var checkIns = 0
        public var checkOuts = 0
        /// Checked-out visits that late measurements showed to continue (one visit, not two).
        public var reopened = 0
        public var walkPasts = 0
        /// Diary writes that failed (their changes stay queued for the next tick).
        public var writeErrors = 0
        /// Herald-format log flushes that failed (their rows are dropped, not kept).
        public var logWriteErrors = 0
        /// Herald-format log rows not written: those of failed flushes and those over the
        /// budget (``HeraldLogWriter/droppedRows``), as of the last flush.
        public var logRowsDropped = 0

        public init() {}
    }

    /// What the diary's admission dropped (``PresenceTracker/Counters``): run-time counts, kept
    /// in no file. The service logs them once a minute while they look like a flood and puts the
    /// last such minute on its status line (``admissionLastMinute``).
    public struct Admission: Sendable, Equatable {
        /// Identities seen once and never tracked, and of those the ones forgotten before the
        /// check-out limit because the filter of first sightings was full.
        public var seenOnce = 0
        public var forgottenEarly = 0
        /// Pending visits ended to make room in a full tracker, and the identities released for
        /// it (idle keys included).
        public var pendingEvicted = 0
        public var identitiesEvicted = 0

        public init(seenOnce: Int = 0, forgottenEarly: Int = 0, pendingEvicted: Int = 0, identitiesEvicted: Int = 0) {
            self.seenOnce = seenOnce
            self.forgottenEarly = forgottenEarly
            self.pendingEvicted = pendingEvicted
            self.identitiesEvicted = identitiesEvicted
        }

        public init(_ counters: PresenceTracker.Counters) {
            self.init(
                seenOnce: counters.seenOnce, forgottenEarly: counters.forgottenEarly, pendingEvicted: counters.pendingVisitsEnded,
                identitiesEvicted: counters.identitiesEvicted)
        }

        /// Anything dropped beyond the handful of one-shot identifiers a venue sees anyway
        /// (phones at the edge of range): ``floodNoticePerMinute``.
        public var looksLikeAFlood: Bool {
            forgottenEarly > 0 || identitiesEvicted > 0 || seenOnce >= DiaryKeeper.floodNoticePerMinute
        }

        static func - (a: Self, b: Self) -> Self {
            Admission(
                seenOnce: a.seenOnce - b.seenOnce, forgottenEarly: a.forgottenEarly - b.forgottenEarly,
                pendingEvicted: a.pendingEvicted - b.pendingEvicted, identitiesEvicted: a.identitiesEvicted - b.identitiesEvicted)
        }
    }

    /// How far the synchronised wall clock may move against the steady clock from one reading to
    /// the next and be followed at once (NTP slews far less; a step this small splits no visit).
    public static let wallStepTolerance: Double = 60
    /// How long a larger step must stand before diary time follows it.
    public static let wallStepHold: Double = 3600

    /// How often the Herald-format logs are written, in seconds of steady time.
    public static let logFlushInterval: Double = 10
    /// How often the admission's counts are looked at (and logged, when they look like a flood).
    public static let admissionInterval: Double = 60
    /// One-shot identifiers a minute from which a minute is reported: 10 a second, far above a
    /// venue's own (a phone is seen many times a minute; only those at the edge of range, once).
    public static let floodNoticePerMinute = 600

    public private(set) var pipeline: DiaryPipeline
    public private(set) var counters = Counters()
    /// Whether diary time is wall time (the system clock was synchronised).
    public private(set) var synchronised: Bool
    /// The Herald-format logs, if written (their counts and current failure for a status).
    public private(set) var heraldLogs: HeraldLogWriter?
    private let path: String
    /// Diary time = steady time + offset; the offset is frozen while the clock is not synchronised.
    private var offset: Double
    /// This boot, and CLOCK_BOOTTIME − steady time (constant: both count from boot at one rate).
    private let bootID: String
    private let bootMinusSteady: Double
    /// A step of the synchronised wall clock not followed yet: when it was seen (steady time)
    /// and the wall − steady it stepped to.
    private var heldStep: (since: Double, offset: Double)?
    private var nextLogFlush: Double
    private var writeFailing = false
    private var reportedDrops = 0
    private var nextAdmission: Double
    private var admissionSeen = Admission()
    /// When placeholder identifiers were last logged (at most hourly), and the shared-identity
    /// marks logged so far.
    private var placeholdersLogged = -Double.infinity
    private var placeholderSightingsSeen = 0
    private var sharedIdentitiesSeen = 0
    /// The last minute's admission counts if it looked like a flood (``Admission/looksLikeAFlood``),
    /// else zeros: for the status line.
    public private(set) var admissionLastMinute = Admission()

    /// Opens the diary in `store` (at `path`, for messages). `boot` is this boot's reading;
    /// `synchronised` whether the system clock is. Opening notices go to `notices`.
    public init(
        store: DiaryStore, path: String, settings: DiarySettings, policy: FlushPolicy = .live,
        heraldLogs: HeraldLogWriter? = nil, steady: Double, wall: Double, synchronised: Bool, boot: BootReading,
        notices: inout [Notice]
    ) throws {
        let clock: DiaryClock = synchronised ? .synchronised : .unsynchronised(bootID: boot.bootID, wallMinusBoot: boot.wallMinusBoot)
        pipeline = DiaryPipeline(diary: try VenueDiary(store: store, settings: settings, now: wall, policy: policy, clock: clock))
        self.synchronised = synchronised
        self.heraldLogs = heraldLogs
        self.path = path
        offset = wall - steady
        bootID = boot.bootID
        bootMinusSteady = wall - boot.wallMinusBoot - steady
        nextLogFlush = steady + 1 + Self.logFlushInterval
        nextAdmission = steady + Self.admissionInterval
        // Visits an earlier run of this boot recorded before sync (it stopped before it saw sync).
        let correction = synchronised ? try pipeline.synchronise(bootID: boot.bootID, wallMinusBoot: boot.wallMinusBoot) : nil
        var opened = "diary \(path) open"
        if pipeline.diary.resumedVisits > 0 { opened += ", \(pipeline.diary.resumedVisits) visits resumed" }
        if pipeline.diary.closedStaleVisits > 0 { opened += ", \(pipeline.diary.closedStaleVisits) visits closed at their last sighting" }
        if !settings.isRecording { opened += " (recording_days = 0: nothing is recorded)" }
        notices.append(.log(LogLine(.info, opened)))
        if let correction, correction.correctedVisits + correction.uncorrectableVisits > 0 {
            notices.append(.log(Self.line(correction)))
        }
    }

    /// Visits open now (present phones, pending ones included).
    public var openVisits: Int { pipeline.diary.tracker.openVisitCount }

    /// What the diary's admission dropped since the diary was opened.
    public var admission: Admission { Admission(pipeline.diary.tracker.counters) }

    /// Diary time at steady time `steady`.
    public func now(steady: Double) -> Double { steady + offset }

    /// Sensor events, in order (event times are steady times).
    public mutating func record(_ events: [SensorEvent], steady: Double, wall: Double) {
        // A step is noticed (and maybe held) at the next tick; until then diary time goes on.
        if synchronised, heldStep == nil, abs(wall - steady - offset) <= Self.wallStepTolerance { offset = wall - steady }
        for event in events {
            pipeline.handle(event, wallOffset: offset)
            heraldLogs?.record(event, wallTime: event.time + offset)
        }
    }

    /// Once a second. `synchronisation` is asked, until it first answers, whether the system
    /// clock is synchronised now, and for this boot's reading if so. Throws only when the diary
    /// is damaged beyond writing (``DiaryError/isPermanent``); the logs are flushed first.
    public mutating func tick(
        steady: Double, wall: Double, synchronisation: () -> BootReading?, into notices: inout [Notice]
    ) throws(DiaryError) {
        if synchronised {
            followWall(steady: steady, wall: wall, into: &notices)
        } else if let boot = synchronisation() {
            do {
                let correction = try pipeline.synchronise(bootID: boot.bootID, wallMinusBoot: boot.wallMinusBoot)
                notices.append(.log(Self.line(correction)))
                synchronised = true
                offset = wall - steady
            } catch {
                notices.append(.log(LogLine(.error, "cannot correct the diary for the synchronised clock: \(error); retrying every second")))
            }
        }
        let now = steady + offset
        let purges = pipeline.counters.purged
        do {
            let changes = try pipeline.tick(now: now)
            if writeFailing {
                notices.append(.log(LogLine(.notice, "diary writes work again")))
                writeFailing = false
            }
            report(changes, into: &notices)
        } catch {
            counters.writeErrors += 1
            if let diaryError = DiaryError.from(error, path: path), diaryError.isPermanent {
                // Damaged under the service (a failing SD card): never write into it again.
                flushLogs(now: now, into: &notices)
                throw diaryError
            }
            // The changes stay queued and are written at the next tick that succeeds.
            if !writeFailing { notices.append(.log(LogLine(.error, "cannot write the diary: \(error); retrying every second"))) }
            writeFailing = true
        }
        if pipeline.counters.purged > purges {
            let days = pipeline.diary.settings.recordingDays ?? 0
            notices.append(.log(LogLine(.info, "retention: deleted \(pipeline.counters.purged - purges) visits older than \(days) days")))
        }
        if steady >= nextAdmission {
            nextAdmission = steady + Self.admissionInterval
            reportAdmission(into: &notices)
            reportIdentityTrouble(steady: steady, into: &notices)
        }
        if heraldLogs != nil, steady >= nextLogFlush {
            nextLogFlush = steady + Self.logFlushInterval
            flushLogs(now: now, into: &notices)
        }
    }

    /// The synchronised wall clock's reading: followed while it moves no more than
    /// ``wallStepTolerance``; a larger step is held until the clock comes back or the step has
    /// stood for ``wallStepHold``.
    private mutating func followWall(steady: Double, wall: Double, into notices: inout [Notice]) {
        let seen = wall - steady
        // `wall − CLOCK_BOOTTIME` as diary time has it.
        let held = offset - bootMinusSteady
        guard let step = heldStep else {
            guard abs(seen - offset) > Self.wallStepTolerance else {
                offset = seen
                return
            }
            heldStep = (steady, seen)
            pipeline.desynchronise(bootID: bootID, wallMinusBoot: held)
            notices.append(.log(LogLine(.warning,
                "the synchronised system clock stepped \(Self.signed(seen - offset)): diary times stay on the steady clock "
                    + "until it comes back or the step has stood for \(Self.duration(Self.wallStepHold))")))
            return
        }
        if abs(seen - offset) <= Self.wallStepTolerance {
            do {
                _ = try pipeline.synchronise(bootID: bootID, wallMinusBoot: held)  // a step of 0: nothing to correct
                heldStep = nil
                offset = seen
                notices.append(.log(LogLine(.notice,
                    "the system clock is back after \(Self.duration(steady - step.since)); diary times kept, nothing to correct")))
            } catch {
                notices.append(.log(LogLine(.error, "cannot clear the diary's clock marks: \(error); retrying every second")))
            }
        } else if steady - step.since >= Self.wallStepHold {
            do {
                let correction = try pipeline.synchronise(bootID: bootID, wallMinusBoot: seen - bootMinusSteady)
                heldStep = nil
                offset = seen
                notices.append(.log(LogLine(.notice,
                    "the system clock's step has stood for \(Self.duration(Self.wallStepHold)): diary time follows it"
                        + (correction.correctedVisits > 0 ? "; corrected the times of \(correction.correctedVisits) visits recorded since" : ""))))
            } catch {
                notices.append(.log(LogLine(.error, "cannot correct the diary for the clock's step: \(error); retrying every second")))
            }
        } else if abs(seen - step.offset) > Self.wallStepTolerance {
            heldStep = (step.since, seen)  // stepped again, not back: still held from the first step
        }
    }

    /// "+2 h 0 min", "-45 s".
    private static func signed(_ seconds: Double) -> String { (seconds >= 0 ? "+" : "-") + duration(abs(seconds)) }

    /// Sensor events dropped on the way in so far (the shell's queue): logged when it grows.
    public mutating func dropped(_ total: Int, into notices: inout [Notice]) {
        guard total > reportedDrops else { return }
        notices.append(.log(LogLine(.warning, "the diary fell behind: \(total - reportedDrops) sensor events dropped")))
        reportedDrops = total
    }

    /// Closing time: every open visit is closed at its last sighting and written now.
    public mutating func checkOutAll(steady: Double, into notices: inout [Notice]) {
        do {
            report(try pipeline.checkOutAll(now: now(steady: steady)), into: &notices)
        } catch {
            counters.writeErrors += 1
            notices.append(.log(LogLine(.error, "cannot close the open visits at closing time: \(error)")))
        }
    }

    /// Writes everything now (before an export).
    public mutating func flush(steady: Double, into notices: inout [Notice]) {
        do {
            report(try pipeline.flush(now: now(steady: steady)), into: &notices)
        } catch {
            counters.writeErrors += 1
            notices.append(.log(LogLine(.error, "cannot write the diary before the export: \(error)")))
        }
    }

    /// The last write at shutdown: open visits stay open in the diary and are resumed at the next
    /// start. Throws when the diary cannot be written (the logs are flushed all the same).
    public mutating func close(steady: Double, into notices: inout [Notice]) throws {
        let now = now(steady: steady)
        defer { flushLogs(now: now, into: &notices) }
        do {
            report(try pipeline.close(now: now), into: &notices)
            let open = openVisits
            notices.append(.log(LogLine(.info, "diary closed\(open > 0 ? "; \(open) open visits continue at the next start" : "")")))
        } catch {
            counters.writeErrors += 1
            notices.append(.log(LogLine(.error, "cannot write the diary at shutdown: \(error)")))
            throw error
        }
    }

    /// Writes the Herald logs; what they say is worth a line (a failure once per run of failures,
    /// writing again, the budget) goes to the log.
    private mutating func flushLogs(now: Double, into notices: inout [Notice]) {
        guard var logs = heraldLogs else { return }
        heraldLogs = nil  // one copy of the writer's buffers, not two
        let failed = logs.failedFlushes
        for notice in logs.flush(now: now) {
            let level: LogLine.Level
            switch notice {
            case .failing: level = .error
            case .writingAgain: level = .notice
            case .dayOverBudget: level = .warning
            case .deletedForBudget: level = .info
            }
            notices.append(.log(LogLine(level, notice.description)))
        }
        counters.logWriteErrors += logs.failedFlushes - failed
        counters.logRowsDropped = logs.droppedRows
        heraldLogs = logs
    }

    private mutating func report(_ changes: [VisitChange], into notices: inout [Notice]) {
        guard !changes.isEmpty else { return }
        for change in changes {
            let visit = change.visit
            let id = "\(visit.kind.rawValue):\(heraldShortName(visit.payload))"
            switch change.event {
            case .checkedIn:
                counters.checkIns += 1
                notices.append(.log(LogLine(.info, "check-in \(id), present since \(TimeText.iso8601(visit.checkIn))")))
            case .checkedOut:
                counters.checkOuts += 1
                let end = visit.checkOut ?? visit.lastSeen
                notices.append(.log(LogLine(
                    .info, "check-out \(id), \(TimeText.iso8601(visit.checkIn)) to \(TimeText.iso8601(end)) (\(Self.duration(end - visit.checkIn)))")))
            case .reopened:
                counters.reopened += 1
                notices.append(.log(LogLine(
                    .info, "visit continues \(id), present since \(TimeText.iso8601(visit.checkIn)) (late measurements bridged the gap)")))
            case .walkPast:
                counters.walkPasts += 1
                notices.append(.log(LogLine(.debug, "walk-past \(id), \(Self.duration(visit.lastSeen - visit.checkIn)): not recorded")))
            case .updated:
                break
            }
        }
        notices.append(.visits(changes))
    }

    /// Once a minute: the minute's admission counts, logged when they look like a flood.
    private mutating func reportAdmission(into notices: inout [Notice]) {
        let total = admission
        let minute = total - admissionSeen
        admissionSeen = total
        guard minute.looksLikeAFlood else {
            admissionLastMinute = Admission()
            return
        }
        admissionLastMinute = minute
        var text = "diary admission in the last minute: \(minute.seenOnce) identifiers seen once, not tracked"
        if minute.forgottenEarly > 0 {
            text += " (\(minute.forgottenEarly) forgotten before check_out: the filter of first sightings was full)"
        }
        if minute.identitiesEvicted > 0 {
            text += "; tracker full: \(minute.pendingEvicted) pending visits ended and \(minute.identitiesEvicted - minute.pendingEvicted) idle keys released"
        }
        text += "; since start \(total.seenOnce) seen once, \(total.forgottenEarly) forgotten early, \(total.pendingEvicted) pending visits evicted"
        notices.append(.log(LogLine(.warning, text + " (an advert flood?)")))
    }

    /// Once a minute: placeholder identifiers heard (logged at most hourly) and visits newly
    /// marked as carried by two devices at once.
    private mutating func reportIdentityTrouble(steady: Double, into notices: inout [Notice]) {
        let placeholders = pipeline.counters.placeholderSightings
        if placeholders > placeholderSightingsSeen, steady - placeholdersLogged >= 3600 {
            placeholdersLogged = steady
            placeholderSightingsSeen = placeholders
            notices.append(.log(LogLine(.notice,
                "\(pipeline.placeholderDevicesPresent) devices nearby send a placeholder identifier (all one byte value, as Herald "
                    + "phones send from 2026-03-18): counted as present, never recorded as visits (they would all merge into one); "
                    + "\(placeholders) such sightings since start")))
        }
        let shared = pipeline.diary.tracker.counters.sharedIdentities
        if shared > sharedIdentitiesSeen {
            notices.append(.log(LogLine(.notice,
                "\(shared - sharedIdentitiesSeen) visits marked shared_identifier: their identifier was heard from two or more "
                    + "devices at once (\(shared) since start); exports mark them, as each may be several people")))
            sharedIdentitiesSeen = shared
        }
    }

    private static func line(_ correction: ClockCorrection) -> LogLine {
        var text = "the system clock is synchronised"
        if correction.step != 0 { text += "; it stepped \(correction.step >= 0 ? "+" : "-")\(Int(abs(correction.step).rounded())) s" }
        if correction.correctedVisits > 0 { text += "; corrected the times of \(correction.correctedVisits) visits recorded before" }
        if correction.uncorrectableVisits > 0 {
            text += "; \(correction.uncorrectableVisits) visits from boots that never synchronised keep uncorrected times (exports mark them)"
        }
        return LogLine(.notice, text)
    }

    /// "42 s", "3 min 5 s", "2 h 10 min".
    public static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }
}
