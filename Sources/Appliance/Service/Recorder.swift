import BLETransport
import Dispatch
import Herald
import Logging
import Synchronization
import VenueDiary
import VenueNode

/// Records the node's sensor events: the venue diary (through ``DiaryPipeline``) and, when
/// configured, Herald-format log files. Both block on the disk, so they run on a thread of their
/// own, never on the cooperative pool. The node's loop hands events over with ``submit(_:)``,
/// which never blocks.
///
/// Once a second the thread ticks the diary (check-ins committed within `commit_seconds`, open
/// visits' progress every 10 minutes, retention at start and
/// hourly once the clock is synchronised), logs check-ins and check-outs with a short payload
/// id, and reports them to the hooks. On ``stop()`` (or cancellation of ``run()``) it writes
/// what it has and closes the diary; open visits stay open and are resumed at the next start.
///
/// The diary's clock: while the system clock is not synchronised (`hooks.clockSynchronised`),
/// diary time runs on the steady clock from the wall time at start, so a step of the wall clock
/// cannot split visits, and new visits are stamped with the boot and `wall − CLOCK_BOOTTIME`.
/// When sync is reported, the step is measured and the diary corrects, in one transaction,
/// every visit this boot recorded before; from then on diary time is wall time.
final class Recorder: Sendable {
    struct Options: Sendable {
        var diaryPath: String
        var diarySettings: DiarySettings
        var flushPolicy: FlushPolicy
        /// Herald-format logs (`[herald] log_directory`), if wanted.
        var heraldLogs: HeraldLogWriter?
    }

    /// Events waiting for the thread. When the thread falls this far behind, the oldest half is
    /// dropped and counted (a presence system needs the newest sightings most).
    static let capacity = 65_536

    private struct Inbox: Sendable {
        var events: [SensorEvent] = []
        var stopping = false
        var checkingOut = false
        var dropped = 0
        /// ``flush()`` calls waiting for the next write.
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let options: Options
    private let clock: NodeClock
    private let hooks: ServiceHooks
    private let logger: Logger
    private let inbox = Mutex(Inbox())
    private let wake = DispatchSemaphore(value: 0)
    private let openVisits = Atomic<Int>(0)

    init(options: Options, clock: NodeClock, hooks: ServiceHooks, logger: Logger) {
        self.options = options
        self.clock = clock
        self.hooks = hooks
        self.logger = logger
    }

    /// Visits open at the last tick (present phones, pending ones included).
    var present: Int { openVisits.load(ordering: .relaxed) }

    /// Hands events to the thread; never blocks.
    func submit(_ events: [SensorEvent]) {
        guard !events.isEmpty else { return }
        inbox.withLock { inbox in
            if inbox.events.count + events.count > Self.capacity {
                let drop = inbox.events.count / 2
                inbox.events.removeFirst(drop)
                inbox.dropped += drop
            }
            inbox.events.append(contentsOf: events)
        }
        wake.signal()
    }

    /// Closing time (opening hours): the thread closes every open visit at its last sighting.
    func checkOutAll() {
        inbox.withLock { $0.checkingOut = true }
        wake.signal()
    }

    /// Has the thread commit everything it holds now (before an export); returns when written,
    /// or at once when the recorder is stopping or stopped.
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = inbox.withLock { inbox in
                guard !inbox.stopping else { return false }
                inbox.flushWaiters.append(continuation)
                return true
            }
            if accepted { wake.signal() } else { continuation.resume() }
        }
    }

    /// Asks the thread to write what it has and close the diary; ``run()`` returns then.
    func stop() {
        inbox.withLock { $0.stopping = true }
        wake.signal()
    }

    /// Opens the diary and records until stopped or cancelled. Throws when the diary cannot be
    /// opened (e.g. `DiaryError.notADiary`).
    func run() async throws {
        let result: Result<Void, any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DedicatedThread.start(name: "diary") { [self] in continuation.resume(returning: threadMain()) }
            }
        } onCancel: {
            stop()
        }
        try result.get()
    }

    // MARK: The thread

    private func threadMain() -> Result<Void, any Error> {
        var pipeline: DiaryPipeline
        var synced = hooks.clockSynchronised()
        // Diary time = steady time + offset; the offset is frozen while the clock is not synchronised.
        var offset = clock.wallOffset
        var correction: ClockCorrection?
        do {
            let store = try DiaryStore(path: options.diaryPath)
            let reading = clock.wallMinusBoot
            let diaryClock: DiaryClock = synced ? .synchronised : .unsynchronised(bootID: reading.bootID, wallMinusBoot: reading.seconds)
            pipeline = DiaryPipeline(
                diary: try VenueDiary(
                    store: store, settings: options.diarySettings, now: clock.wall(), policy: options.flushPolicy, clock: diaryClock))
            // Visits an earlier run of this boot recorded before sync (it stopped before it saw sync).
            if synced { correction = try pipeline.synchronise(bootID: reading.bootID, wallMinusBoot: reading.seconds) }
        } catch {
            inbox.withLock { $0.stopping = true }
            for waiter in inbox.withLock({ $0.flushWaiters }) { waiter.resume() }
            return .failure(error)
        }
        func now() -> Double { clock.monotonic() + offset }
        var opened = "diary \(options.diaryPath) open"
        if pipeline.diary.resumedVisits > 0 { opened += ", \(pipeline.diary.resumedVisits) visits resumed" }
        if pipeline.diary.closedStaleVisits > 0 { opened += ", \(pipeline.diary.closedStaleVisits) visits closed at their last sighting" }
        if !options.diarySettings.isRecording { opened += " (recording_days = 0: nothing is recorded)" }
        logger.info("\(opened)")
        if let correction, correction.correctedVisits + correction.uncorrectableVisits > 0 { log(correction) }
        if !synced, clock.wallMinusBoot.bootID.hasPrefix(BootTime.processBootIDPrefix) {
            logger.notice("""
                cannot read this boot's id ($\(BootTime.bootIDVariable) or \(BootTime.bootIDFile)): visits recorded \
                before the clock is synchronised are corrected only if this process sees the sync
                """)
        }

        var heraldLogs = options.heraldLogs
        var nextTick = clock.monotonic() + 1
        var nextLogFlush = nextTick + 10
        var writeFailing = false
        var logsFailing = false
        var reportedDrops = 0
        while true {
            let wait = max(0, nextTick - clock.monotonic())
            _ = wake.wait(timeout: .now() + .milliseconds(Int(wait * 1000) + 1))
            let (events, stopping, checkingOut, dropped, flushWaiters) = inbox.withLock { inbox in
                defer {
                    // A burst's capacity is given back; the usual second's is kept.
                    inbox.events.removeAll(keepingCapacity: inbox.events.count <= 4096)
                    inbox.checkingOut = false
                    inbox.flushWaiters.removeAll()
                }
                return (inbox.events, inbox.stopping, inbox.checkingOut, inbox.dropped, inbox.flushWaiters)
            }
            if synced { offset = clock.wallOffset }
            for event in events {
                pipeline.handle(event, wallOffset: offset)
                heraldLogs?.record(event, wallTime: event.time + offset)
            }
            if !flushWaiters.isEmpty {
                do {
                    report(try pipeline.flush(now: now()))
                } catch {
                    logger.error("cannot write the diary before the export: \(error)")
                }
                for waiter in flushWaiters { waiter.resume() }
            }
            if stopping { break }
            if checkingOut {
                do {
                    report(try pipeline.checkOutAll(now: now()))
                    openVisits.store(pipeline.diary.tracker.openVisitCount, ordering: .relaxed)
                } catch {
                    logger.error("cannot close the open visits at closing time: \(error)")
                }
            }

            let steady = clock.monotonic()
            guard steady >= nextTick else { continue }
            nextTick = nextTick + 1 > steady ? nextTick + 1 : steady + 1
            if !synced && hooks.clockSynchronised() {
                let reading = clock.wallMinusBoot
                do {
                    log(try pipeline.synchronise(bootID: reading.bootID, wallMinusBoot: reading.seconds))
                    synced = true
                    offset = clock.wallOffset
                } catch {
                    logger.error("cannot correct the diary for the synchronised clock: \(error); retrying every second")
                }
            }
            let purges = pipeline.counters.purged
            do {
                let changes = try pipeline.tick(now: now())
                if writeFailing {
                    logger.notice("diary writes work again")
                    writeFailing = false
                }
                report(changes)
            } catch {
                if let diaryError = DiaryError.from(error, path: options.diaryPath), diaryError.isPermanent {
                    // Damaged under the service (a failing SD card): never write into it again.
                    inbox.withLock { $0.stopping = true }
                    for waiter in inbox.withLock({ $0.flushWaiters }) { waiter.resume() }
                    flush(&heraldLogs, now: now(), failing: &logsFailing)
                    return .failure(diaryError)
                }
                // The changes stay queued and are written at the next tick that succeeds.
                if !writeFailing { logger.error("cannot write the diary: \(error); retrying every second") }
                writeFailing = true
            }
            if pipeline.counters.purged > purges {
                logger.info("retention: deleted \(pipeline.counters.purged - purges) visits older than \(options.diarySettings.recordingDays ?? 0) days")
            }
            openVisits.store(pipeline.diary.tracker.openVisitCount, ordering: .relaxed)
            if dropped > reportedDrops {
                logger.warning("the diary fell behind: \(dropped - reportedDrops) sensor events dropped")
                reportedDrops = dropped
            }
            if heraldLogs != nil, steady >= nextLogFlush {
                nextLogFlush = steady + 10
                flush(&heraldLogs, now: now(), failing: &logsFailing)
            }
        }

        var result = Result<Void, any Error>.success(())
        do {
            _ = try pipeline.close(now: now())
            let open = pipeline.diary.tracker.openVisitCount
            logger.info("diary closed\(open > 0 ? "; \(open) open visits continue at the next start" : "")")
        } catch {
            logger.error("cannot write the diary at shutdown: \(error)")
            result = .failure(error)
        }
        flush(&heraldLogs, now: now(), failing: &logsFailing)
        return result
    }

    private func flush(_ logs: inout HeraldLogWriter?, now: Double, failing: inout Bool) {
        do {
            try logs?.flush(now: now)
            failing = false
        } catch {
            if !failing { logger.error("cannot write the Herald logs: \(error)") }
            failing = true
        }
    }

    private func log(_ correction: ClockCorrection) {
        var text = "the system clock is synchronised"
        if correction.step != 0 { text += String(format: "; it stepped %+.0f s", correction.step) }
        if correction.correctedVisits > 0 { text += "; corrected the times of \(correction.correctedVisits) visits recorded before" }
        if correction.uncorrectableVisits > 0 {
            text += "; \(correction.uncorrectableVisits) visits from boots that never synchronised keep uncorrected times (exports mark them)"
        }
        logger.notice("\(text)")
    }

    private func report(_ changes: [VisitChange]) {
        guard !changes.isEmpty else { return }
        for change in changes {
            let visit = change.visit
            let id = "\(visit.kind.rawValue):\(heraldShortName(visit.payload))"
            switch change.event {
            case .checkedIn:
                logger.info("check-in \(id), present since \(TimeText.iso8601(visit.checkIn))")
            case .checkedOut:
                let end = visit.checkOut ?? visit.lastSeen
                logger.info("check-out \(id), \(TimeText.iso8601(visit.checkIn)) to \(TimeText.iso8601(end)) (\(Self.duration(end - visit.checkIn)))")
            case .reopened:
                logger.info("visit continues \(id), present since \(TimeText.iso8601(visit.checkIn)) (late measurements bridged the gap)")
            case .walkPast:
                logger.debug("walk-past \(id), \(Self.duration(visit.lastSeen - visit.checkIn)): not recorded")
            case .updated:
                break
            }
        }
        hooks.visits(changes)
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }
}
