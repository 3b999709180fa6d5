import BLETransport
import Dispatch
import Herald
import Logging
import Synchronization
import VenueDiary
import VenueNode

/// Records the node's sensor events: the shell that runs ``DiaryKeeper`` (the diary through
/// ``DiaryPipeline`` and, when configured, Herald-format log files) on a thread of its own,
/// because both block on the disk. The node's loop hands events over with ``submit(_:)``, which
/// never blocks; the thread wakes for them and once a second, reads the clocks and the clock's
/// synchronisation (`hooks.clockSynchronised`), and writes the keeper's notices to the log and
/// the hooks. What is written when, and the diary's clock before and after sync, the keeper
/// decides (the simulated venue runs the same keeper). On ``stop()`` (or cancellation of
/// ``run()``) it writes what it has and closes the diary; open visits stay open and are resumed
/// at the next start.
final class Recorder: Sendable {
    struct Options: Sendable {
        var diaryPath: String
        var diarySettings: DiarySettings
        var flushPolicy: FlushPolicy
        /// Herald-format logs (`[herald] log_directory`), if wanted.
        var heraldLogs: HeraldLogWriter?
        /// Events the queue holds before it drops (``capacity``; tests make it small).
        var queueCapacity = Recorder.capacity
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
    private let logRowsDropped = Atomic<Int>(0)
    private let lastAdmission = Mutex(DiaryKeeper.Admission())

    init(options: Options, clock: NodeClock, hooks: ServiceHooks, logger: Logger) {
        self.options = options
        self.clock = clock
        self.hooks = hooks
        self.logger = logger
    }

    /// Visits open at the last tick (present phones, pending ones included).
    var present: Int { openVisits.load(ordering: .relaxed) }

    /// Herald-format log rows dropped as of the last tick (failed writes, the budget).
    var heraldLogRowsDropped: Int { logRowsDropped.load(ordering: .relaxed) }

    /// What the diary's admission dropped in the last minute, if that looked like a flood.
    var admission: DiaryKeeper.Admission { lastAdmission.withLock { $0 } }

    /// Events queued that wake the thread before its next second: the thread takes the queue at
    /// each second's tick anyway, so a crowd's adverts cost one wake-up a second (or one per this
    /// many at the UART's rate), not one each (BENCHMARKS.md, "Where the instructions go").
    static let wakeBatch = 256

    /// Hands events to the thread; never blocks. The host's thread hands over each turn's events
    /// (an advert's, often); they are recorded within a second (at the thread's tick), at once
    /// when ``wakeBatch`` are waiting, and before any ``flush()``, ``checkOutAll()`` or ``stop()``.
    func submit(_ events: [SensorEvent]) {
        guard !events.isEmpty else { return }
        let crossed = inbox.withLock { inbox in
            let before = inbox.events.count
            if inbox.events.count + events.count > options.queueCapacity {
                let drop = inbox.events.count / 2
                inbox.events.removeFirst(drop)
                inbox.dropped += drop
            }
            inbox.events.append(contentsOf: events)
            return before < Self.wakeBatch && inbox.events.count >= Self.wakeBatch
        }
        if crossed { wake.signal() }
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

    /// The shell around ``DiaryKeeper``: it waits for events or the next second, takes what the
    /// node handed over, reads the clocks, and writes the keeper's notices to the log and hooks.
    private func threadMain() -> Result<Void, any Error> {
        var keeper: DiaryKeeper
        var notices: [DiaryKeeper.Notice] = []
        do {
            let store = try DiaryStore(path: options.diaryPath)
            let reading = clock.wallMinusBoot
            keeper = try DiaryKeeper(
                store: store, path: options.diaryPath, settings: options.diarySettings, policy: options.flushPolicy,
                heraldLogs: options.heraldLogs, steady: clock.monotonic(), wall: clock.wall(),
                synchronised: hooks.clockSynchronised(), boot: .init(bootID: reading.bootID, wallMinusBoot: reading.seconds),
                notices: &notices)
        } catch {
            failed()
            return .failure(error)
        }
        carry(&notices)
        if !keeper.synchronised, clock.wallMinusBoot.bootID.hasPrefix(BootTime.processBootIDPrefix) {
            logger.notice("""
                cannot read this boot's id ($\(BootTime.bootIDVariable) or \(BootTime.bootIDFile)): visits recorded \
                before the clock is synchronised are corrected only if this process sees the sync
                """)
        }
        var nextTick = clock.monotonic() + 1
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
            keeper.record(events, steady: clock.monotonic(), wall: clock.wall())
            if !flushWaiters.isEmpty {
                keeper.flush(steady: clock.monotonic(), into: &notices)
                carry(&notices)
                for waiter in flushWaiters { waiter.resume() }
            }
            if stopping { break }
            if checkingOut {
                keeper.checkOutAll(steady: clock.monotonic(), into: &notices)
                openVisits.store(keeper.openVisits, ordering: .relaxed)
            }
            keeper.dropped(dropped, into: &notices)
            let steady = clock.monotonic()
            guard steady >= nextTick else {
                carry(&notices)
                continue
            }
            nextTick = nextTick + 1 > steady ? nextTick + 1 : steady + 1
            do {
                try keeper.tick(steady: steady, wall: clock.wall(), synchronisation: synchronisation, into: &notices)
            } catch {
                carry(&notices)
                failed()
                return .failure(error)
            }
            openVisits.store(keeper.openVisits, ordering: .relaxed)
            logRowsDropped.store(keeper.counters.logRowsDropped, ordering: .relaxed)
            let admission = keeper.admissionLastMinute
            lastAdmission.withLock { $0 = admission }
            carry(&notices)
        }

        var result = Result<Void, any Error>.success(())
        do {
            try keeper.close(steady: clock.monotonic(), into: &notices)
        } catch {
            result = .failure(error)
        }
        carry(&notices)
        return result
    }

    /// This boot's reading once the system clock is synchronised; nil before.
    private func synchronisation() -> DiaryKeeper.BootReading? {
        guard hooks.clockSynchronised() else { return nil }
        let reading = clock.wallMinusBoot
        return .init(bootID: reading.bootID, wallMinusBoot: reading.seconds)
    }

    /// The diary cannot go on: the recorder stops taking events and exports stop waiting.
    private func failed() {
        inbox.withLock { $0.stopping = true }
        for waiter in inbox.withLock({ $0.flushWaiters }) { waiter.resume() }
    }

    private func carry(_ notices: inout [DiaryKeeper.Notice]) {
        for notice in notices {
            switch notice {
            case .log(let line): logger.log(line)
            case .visits(let changes): hooks.visits(changes)
            }
        }
        notices.removeAll(keepingCapacity: true)
    }
}

extension Logger {
    /// A line from one of the node's pure parts.
    func log(_ line: LogLine) {
        switch line.level {
        case .debug: debug("\(line.text)")
        case .info: info("\(line.text)")
        case .notice: notice("\(line.text)")
        case .warning: warning("\(line.text)")
        case .error: error("\(line.text)")
        }
    }
}
