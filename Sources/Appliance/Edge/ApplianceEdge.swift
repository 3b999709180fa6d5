import Foundation
import Glibc
import Herald
import Logging
import Synchronization
import VenueDiary
import VenueNode

/// The appliance's edge, plugged into `venue-beacon run` through ``ServiceHooks``: systemd
/// notify and watchdog, the status/activity/export LEDs and the export button, the export job
/// (button and SIGUSR1), the outbox retries, clock-sync detection and opening hours on the
/// status LED (as the radio loop says: it decides when the venue opens and closes).
///
///     let edge = await ApplianceEdge.start(settings: settings, logger: logger)
///     let service = NodeService(settings: settings, hooks: edge.hooks, logger: logger)
///     async let edgeWork: Void = edge.run()      // until cancelled
///     ... try await service.run() ...; edge.shutdown()
public final class ApplianceEdge: Sendable {
    public let hooks: ServiceHooks
    private let panel: GPIOPanel?
    private let job: ExportJob
    private let delivery: ExportDelivery
    /// `[export] schedule`; nil: none.
    let scheduledExport: ScheduledExport?
    private let detector: ClockSyncDetector
    private let logger: Logger
    private let state = SharedState()
    /// `[replication]`: the diary sent to the venue hub; nil: no replication.
    let replication: ReplicationWorker?
    /// `[bluetooth] device`, for telling a blocked or missing adapter from other failures.
    private let device: String

    struct State {
        var radio: RadioCondition = .starting
        var clockSynchronised = false
        /// Opening hours, as the radio loop says (open until it says otherwise).
        var open = true
        var lastWatchdog: ContinuousClock.Instant?
        var startupCode = StartupCodeSchedule(lifetime: nil)
        /// The config on the boot partition was refused (``BootPartition/importRefused(in:)``).
        var configRefused = false
        /// The radio is unavailable because rfkill blocks it or the adapter is missing.
        var bluetoothBlocked = false

        /// What the status LED shows for this state.
        var status: NodeStatus {
            ApplianceEdge.status(
                radio: radio, clockSynchronised: clockSynchronised, open: open, configError: configRefused, bluetoothBlocked: bluetoothBlocked)
        }
    }

    /// The state the hooks (called from the service's loops) and the housekeeping task share.
    final class SharedState: Sendable {
        private let value = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { value.withLock { body(&$0) } }
    }

    /// How often clock sync and the outbox are looked at.
    let tick: Duration
    /// Pages the executable's start-up code out (``StartupCode/pageOut()``; tests count the
    /// calls), when ``StartupCodeSchedule`` says.
    let pageOut: @Sendable () -> StartupCode.Report?

    /// Opens GPIO when `[gpio] enabled` (a problem is logged and the node runs without LEDs: it
    /// keeps recording visits), finds the notify socket, and builds the hooks.
    public static func start(
        settings: Settings, logger: Logger, gpio: any GPIOBackend = GPIOBackendSystem(), detector: ClockSyncDetector = .system,
        environment: [String: String] = ProcessInfo.processInfo.environment, tick: Duration = .seconds(10),
        diaryFlusher: DiaryFlusher? = nil, startupCodeLifetime: Duration? = .seconds(60),
        pageOut: @escaping @Sendable () -> StartupCode.Report? = StartupCode.pageOut,
        bootDirectory: String? = nil
    ) async -> ApplianceEdge {
        var panel: GPIOPanel?
        if settings.gpio.enabled {
            do {
                panel = try await GPIOPanel.start(settings: settings.gpio, backend: gpio)
                logger.info("GPIO: chip \(settings.gpio.chip), LEDs and button ready")
            } catch {
                logger.error("GPIO disabled for this run: \(error)")
            }
        }
        // The node's identity: created at the first start, then kept (upgrades included).
        do {
            let (key, created) = try NodeSigningKey.loadOrCreate(at: settings.export.signingKey)
            logger.notice("\(created ? "created the node's signing key" : "node signing key") \(settings.export.signingKey), fingerprint \(key.fingerprint)")
        } catch {
            logger.error("exports cannot be signed: \(error)")
        }
        let edge = ApplianceEdge(
            settings: settings, logger: logger, panel: panel, detector: detector, environment: environment, tick: tick,
            diaryFlusher: diaryFlusher, startupCodeLifetime: startupCodeLifetime, pageOut: pageOut)
        // The installer's config on the boot partition, refused at this start (the unit's
        // ExecStartPre=): the status LED says so until a fixed file is imported.
        if let bootDirectory, BootPartition.importRefused(in: bootDirectory) {
            edge.state.withLock { $0.configRefused = true }
            logger.error(
                "the config on the boot partition was refused: running on the previous config; \(bootDirectory)/\(BootPartition.errorName) lists the problems")
        }
        // Known before the diary opens, so it stamps visits with the right clock from the start.
        if await edge.detectSync() {
            edge.state.withLock { $0.clockSynchronised = true }
        } else {
            logger.notice("the system clock is not synchronised yet: visits are marked and corrected when it is")
        }
        return edge
    }

    init(
        settings: Settings, logger: Logger, panel: GPIOPanel?, detector: ClockSyncDetector, environment: [String: String], tick: Duration,
        diaryFlusher: DiaryFlusher?, startupCodeLifetime: Duration? = nil,
        pageOut: @escaping @Sendable () -> StartupCode.Report? = StartupCode.pageOut
    ) {
        self.tick = tick
        self.device = settings.bluetooth.device
        self.pageOut = pageOut
        let notifier = SystemdNotifier(environment: environment)
        let watchdogInterval = SystemdNotifier.watchdogInterval(environment: environment)
        let delivery = ExportDelivery(settings: settings)
        let job = ExportJob(settings: settings, delivery: delivery, indicator: panel, prepare: { await diaryFlusher?.flush() })
        let state = self.state
        state.withLock { $0.startupCode = StartupCodeSchedule(lifetime: startupCodeLifetime) }
        self.panel = panel
        self.job = job
        self.delivery = delivery
        self.scheduledExport = settings.export.schedule.map { ScheduledExport(schedule: $0, statePath: settings.export.scheduleState) }
        self.detector = detector
        self.logger = logger
        let replication = settings.replication.map { replication in
            ReplicationWorker(
                settings: replication, venue: settings.venue, diaryPath: settings.diary.path,
                clockSynchronised: { state.withLock { $0.clockSynchronised } }, logger: logger)
        }
        self.replication = replication

        /// One sd_notify message; a failure is logged (systemd may have gone away at shutdown).
        @Sendable func notify(_ assignments: [String]) {
            guard let notifier else { return }
            do { try notifier.send(assignments) } catch { logger.warning("\(error)") }
        }
        /// Off the radio loop's thread: the madvise walks megabytes of pages.
        @Sendable func pageOutSoon() {
            Task.detached { Self.pageOutStartupCode(pageOut, logger: logger) }
        }
        hooks = ServiceHooks(
            ready: {
                notify(["READY=1"])
                // The service has the diary open (and migrated): the outbox can be read.
                replication?.start()
                if state.withLock({ $0.startupCode.readySent() }) { pageOutSoon() }
            },
            watchdog: {
                guard notifier != nil, let interval = watchdogInterval else { return }
                let now = ContinuousClock.now
                let due = state.withLock { s in
                    guard s.lastWatchdog.map({ now - $0 >= interval }) ?? true else { return false }
                    s.lastWatchdog = now
                    return true
                }
                if due { notify(["WATCHDOG=1"]) }
            },
            status: { line in
                let backlog = replication?.backlog.map { "; hub backlog \($0) visits" } ?? ""
                notify(["STATUS=" + line + backlog])
            },
            radio: { condition in
                // Recorded with or without LEDs: the housekeeping reads it too.
                let (status, pagingOut) = state.withLock { s in
                    s.radio = condition
                    return (s.status, s.startupCode.radio(condition, now: .now))
                }
                panel?.setStatus(status)
                if pagingOut { pageOutSoon() }
            },
            open: { open in
                let status = state.withLock { s in
                    s.open = open
                    return s.status
                }
                panel?.setStatus(status)
            },
            visits: { changes in
                for change in changes where change.event == .checkedIn { panel?.checkIn() }
            },
            export: { await Self.export(job, logger: logger, trigger: "SIGUSR1") },
            clockSynchronised: { state.withLock { $0.clockSynchronised } },
            stopping: { notify(["STOPPING=1"]) })
    }

    /// The status LED's state from what the node reports. An installer's mistakes come first:
    /// Bluetooth blocked or missing while the radio is unavailable, then a refused config.
    public static func status(
        radio: RadioCondition, clockSynchronised: Bool, open: Bool, configError: Bool = false, bluetoothBlocked: Bool = false
    ) -> NodeStatus {
        if case .unavailable = radio, bluetoothBlocked { return .bluetoothBlocked }
        if configError { return .configError }
        if !open { return .closed }
        switch radio {
        case .starting: return .starting
        case .unavailable: return .bluetoothUnavailable
        case .running, .partial: return clockSynchronised ? .running : .waitingForClockSync
        }
    }

    /// Button presses, clock-sync checks and outbox retries, until cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            if let panel {
                group.addTask { [job, logger] in
                    for await _ in panel.presses { await Self.export(job, logger: logger, trigger: "button") }
                }
            }
            group.addTask { await self.housekeeping() }
        }
    }

    /// Turns the LEDs off and releases the GPIO lines.
    public func shutdown() {
        replication?.stop()
        panel?.stop()
    }

    /// For a fault that restarting cannot mend (a damaged diary): the status LED shows a fault,
    /// systemd hears that the service is up with the reason as its status (so it neither
    /// restarts it in a loop nor times out its start, and `systemctl status` says why), and the
    /// watchdog is fed, until the process is stopped. Nothing is open that a stop must close, so
    /// SIGTERM and SIGINT get their default action back and end the process. `signals` replaces
    /// that (tests): the hold ends at its first termination signal.
    public func holdFault(_ reason: String, signals: AsyncStream<ServiceSignal>? = nil) async {
        panel?.setStatus(.fault)
        hooks.ready()
        hooks.status("not recording: " + reason)
        if signals == nil {
            signal(SIGTERM, SIG_DFL)
            signal(SIGINT, SIG_DFL)
        }
        let hooks = self.hooks
        await withTaskGroup(of: Void.self) { group in
            if let signals {
                group.addTask {
                    for await signal in signals {
                        if case .terminate = signal { return }
                    }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    hooks.watchdog()
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            await group.next()
            group.cancelAll()
        }
        hooks.stopping()
    }

    private func housekeeping() async {
        while !Task.isCancelled {
            // Once synchronised, always: the diary's correction happens once (in the service).
            if !state.withLock({ $0.clockSynchronised }), await detectSync() {
                state.withLock { $0.clockSynchronised = true }
                logger.notice("the system clock is synchronised")
            }
            await checkBluetoothBlocked()
            let (synced, status, pagingOut) = state.withLock { ($0.clockSynchronised, $0.status, $0.startupCode.tick(now: .now)) }
            let now = Date()
            panel?.setStatus(status)

            let report = await delivery.retryDue(now: now)
            for id in report.delivered { logger.info("outbox: delivered \(id)") }
            for entry in report.failed {
                logger.warning("outbox: \(entry.messageID) still not accepted (attempt \(entry.attempts)): \(entry.lastError ?? "")")
            }
            for entry in report.expired {
                logger.warning("outbox: \(entry.messageID) dropped undelivered after \(entry.attempts) attempts: the visits it carries passed recording_days")
            }
            if let problem = report.problem { logger.error("outbox: \(problem)") }

            await runScheduledExport(now: now, synchronised: synced)

            if pagingOut { Self.pageOutStartupCode(pageOut, logger: logger) }

            var wait = tick
            if let next = scheduledExport?.schedule.next(after: now) {
                wait = min(wait, .milliseconds(max(Int(next.timeIntervalSince(now) * 1000), 0) + 10))
            }
            try? await Task.sleep(for: wait)
        }
    }

    /// While the radio is unavailable: whether rfkill blocks it or the adapter is missing (the
    /// status LED's "Bluetooth blocked or missing"), read from sysfs and the adapter list.
    private func checkBluetoothBlocked() async {
        let unavailable = state.withLock { s in
            if case .unavailable = s.radio { return true }
            return false
        }
        let blocked = unavailable ? await Self.offPool { [device] in BluetoothChecks.blockedOrMissing(device: device) } : false
        state.withLock { $0.bluetoothBlocked = blocked }
    }

    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "venue-beacon.installer-check").async { continuation.resume(returning: work()) }
        }
    }

    /// What only start-up used leaves memory (``StartupCode``), when ``StartupCodeSchedule`` says.
    private static func pageOutStartupCode(_ pageOut: () -> StartupCode.Report?, logger: Logger) {
        guard let report = pageOut() else {
            logger.debug("start-up code: /proc/self/maps not readable; kept")
            return
        }
        let megabytes = String(format: "%.1f", Double(report.bytes) / 1_048_576)
        if let error = report.error {
            logger.notice("start-up code: madvise failed (\(String(cString: strerror(error)))); kept in memory")
        } else {
            logger.debug("start-up code: \(report.mappings.count) mappings of the executable (\(megabytes) MB) paged out")
        }
    }

    /// Asks the detector (which may run timedatectl) off the cooperative pool.
    private func detectSync() async -> Bool {
        let detector = self.detector
        return await withCheckedContinuation { continuation in
            DispatchQueue(label: "venue-beacon.clock-sync").async { continuation.resume(returning: detector.isSynchronized()) }
        }
    }

    /// Exports for a scheduled time that is due (also one missed while the node was off), only
    /// on a synchronised clock: before that, "now" may be hours or days off (and a first start
    /// would record a wrong time as done). Returns the scheduled time run for.
    @discardableResult
    func runScheduledExport(now: Date, synchronised: Bool) async -> Date? {
        guard synchronised, let scheduled = scheduledExport, let slot = scheduled.due(now: now) else { return nil }
        let missed = now.timeIntervalSince(slot) > 60
        let trigger = "schedule"
        if missed {
            logger.notice("\(trigger): the export due at \(UTCDate.readable(slot)) was missed (node off?); exporting now")
        } else {
            logger.info("\(trigger): export due at \(UTCDate.readable(slot))")
        }
        // Busy (a button export running): tried again at the next tick.
        guard await Self.export(job, logger: logger, trigger: trigger) else { return nil }
        do {
            try scheduled.done(slot)
        } catch {
            logger.error("\(trigger): cannot record the export in \(scheduled.statePath): \(error); it may run again at the next start")
        }
        return slot
    }

    @discardableResult
    private static func export(_ job: ExportJob, logger: Logger, trigger: String) async -> Bool {
        guard let run = await job.runIfIdle() else {
            logger.notice("\(trigger): an export is already running; ignored")
            return false
        }
        if let problem = run.problem { logger.error("\(trigger): \(problem)") }
        for (target, result) in run.results {
            switch result {
            case .delivered(let text): logger.info("\(trigger): \(target.rawValue): \(text)")
            case .queued(let text): logger.warning("\(trigger): \(target.rawValue): \(text)")
            case .failed(let text): logger.error("\(trigger): \(target.rawValue): \(text)")
            }
        }
        return true
    }
}
