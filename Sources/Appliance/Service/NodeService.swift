import BLEHost
import BLETransport
import Foundation
import Glibc
import Herald
import Logging
import Synchronization
import VenueNode

/// `venue-beacon run`: the composition root of the venue node.
///
/// From validated settings it builds the venue's identity over the air (advert, scan response,
/// GATT service, signal write gate), the Bluetooth host (which opens the controller and reopens
/// it with backoff when it fails), the radio loop (``NodeLoop`` with the engine in ``NodeCore``, on the host's thread) and the recorder (diary and
/// Herald logs, ``Recorder``), and runs them until SIGTERM or SIGINT. Then it closes the diary:
/// the recorder stops at the same moment as Bluetooth, so the final flush never waits for the
/// radio. SIGHUP is answered in the log (no config reload: restart instead); SIGUSR1 runs the
/// export hook.
public struct NodeService: Sendable {
    public let settings: Settings
    public let hooks: ServiceHooks
    public let logger: Logger
    public let clock: NodeClock
    /// Given the diary's recorder while the service runs, so exports can have it write first.
    public let diaryFlusher: DiaryFlusher?

    public init(
        settings: Settings, hooks: ServiceHooks = ServiceHooks(), logger: Logger, clock: NodeClock = .system(),
        diaryFlusher: DiaryFlusher? = nil
    ) {
        self.settings = settings
        self.hooks = hooks
        self.logger = logger
        self.clock = clock
        self.diaryFlusher = diaryFlusher
    }

    /// What stopped the service.
    public enum Exit: Sendable, Equatable {
        /// SIGTERM or SIGINT (the signal number).
        case signal(Int32)
        /// The host gave up (only when it was told not to retry).
        case hostStopped
        /// The task running the service was cancelled.
        case cancelled
    }

    /// Runs until a termination signal (or until the calling task is cancelled). Throws when the
    /// setup fails (the payload, the GATT database, the controller name) or the diary cannot be
    /// opened or closed. `signals` replaces the process's own signals (tests).
    public func run(signals: AsyncStream<ServiceSignal>? = nil) async throws -> Exit {
        let setup = settings.nodeSetup
        let identity = try setup.identity()
        let device = try HCITransportSpec(settings.bluetooth.device)
        let gate = SignalWriteGate(rateLimit: .node)
        let loop = NodeLoop(
            driver: try setup.driver(), schedule: settings.schedule, wall: clock.wall(),
            deviceName: device.description, venueName: settings.venue.name)
        // Outside opening hours at start the radio starts switched off.
        let openAtStart = loop.isOpen
        let configuration = try setup.hostConfiguration(
            identity: identity, gate: gate, switchedOn: RadioState(advertising: openAtStart, scanning: openAtStart))
        let recorder = Recorder(
            options: Recorder.Options(
                diaryPath: settings.diary.path, diarySettings: setup.diary, flushPolicy: settings.diaryFlushPolicy,
                // The logs name phones with times: kept no longer than the diary's visits, and not
                // written at all when nothing is recorded.
                heraldLogs: settings.herald.logDirectory.flatMap { directory in
                    setup.diary.isRecording
                        ? HeraldLogWriter(
                            directory: directory, deviceName: settings.venue.name, softwareVersion: ProductVersion.string,
                            ownPayload: identity.payload, keepingDays: setup.diary.recordingDays,
                            budgetBytes: settings.herald.logBudgetBytes)
                        : nil
                }),
            clock: clock, hooks: hooks, logger: logger)
        let radio = NodeRadio(recorder: recorder, hooks: hooks, clock: clock, logger: logger)
        // The host's thread drives the engine with the radio loop on top (NodeCore): the node's
        // events, requests and ticks never leave that thread. Its first tick comes a second after
        // start, when the controller is usually ready (the first status line says so).
        let host = BluetoothHost(device: device, options: BluetoothHost.Options(retryOpen: true, capturePath: settings.bluetooth.btsnoop)) {
            NodeCore(
                engine: HostEngine(configuration: configuration), loop: loop, firstTick: .now + .seconds(1), steady: { _ in clock.monotonic() },
                tickInfo: radio.tick, sink: radio.carry)
        }

        logger.info("venue-beacon \(ProductVersion.string) starting: \(startLine(identity))")
        let signals = signals ?? ServiceSignals.stream()
        diaryFlusher?.attach(recorder)
        defer { diaryFlusher?.attach(nil) }
        return try await withThrowingTaskGroup(of: Exit?.self) { group in
            group.addTask {
                try await recorder.run()
                return nil
            }
            group.addTask {
                do {
                    try await host.run()
                } catch {
                    logger.error("Bluetooth: \(error)")
                }
                return Task.isCancelled ? nil : .hostStopped
            }
            group.addTask {
                await handle(signals)
            }
            // The first to finish decides: a signal, the host giving up, or the diary failing.
            var exit: Exit? = nil
            while exit == nil, let finished = try await group.next() {
                exit = finished
            }
            hooks.stopping()
            group.cancelAll()
            try await group.waitForAll()
            return exit ?? .cancelled
        }
    }

    /// Signals until SIGTERM or SIGINT, which it returns.
    private func handle(_ signals: AsyncStream<ServiceSignal>) async -> Exit? {
        await withDiscardingTaskGroup(returning: Exit?.self) { group in
            let exporting = ExportGate()
            for await signal in signals {
                switch signal {
                case .terminate(let number):
                    logger.info("stopping (\(number == SIGINT ? "SIGINT" : "SIGTERM")): closing the diary")
                    group.cancelAll()  // an export in progress is cancelled
                    return Exit.signal(number)
                case .reload:
                    logger.notice("SIGHUP: the configuration is read only at start; restart the service to apply changes (systemctl restart venue-beacon)")
                case .export:
                    guard let export = hooks.export else {
                        logger.notice("SIGUSR1: export and delivery are not configured in this build; ignored")
                        continue
                    }
                    guard exporting.begin() else {
                        logger.notice("SIGUSR1: an export is already running; ignored")
                        continue
                    }
                    logger.info("SIGUSR1: exporting the diary")
                    group.addTask {
                        await export()
                        exporting.end()
                    }
                }
            }
            return nil
        }
    }

    private func startLine(_ identity: VenueBeaconIdentity) -> String {
        let venue = settings.venue
        return "venue \"\(venue.name)\" (\(venue.country)/\(venue.state)/\(venue.code), payload \(identity.payload.count) bytes), "
            + "controller \(settings.bluetooth.device), scanning \(settings.bluetooth.scanWindowMS)/\(settings.bluetooth.scanIntervalMS) ms, "
            + "diary \(settings.diary.path)"
    }
}

/// Lets one export run at a time.
private final class ExportGate: Sendable {
    private let running = Atomic<Bool>(false)

    /// False when an export is already running.
    func begin() -> Bool { running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }

    func end() { running.store(false, ordering: .releasing) }
}
