import Foundation
import Synchronization

/// Receives the export's start and end, to show them (the export LED).
public protocol ExportIndicator: Sendable {
    func exportStarted()
    func exportFinished(success: Bool)
}

/// The LEDs and the button on real (or fake) GPIO lines.
///
/// One dedicated thread owns the chip and every line: it applies the inputs posted here to a
/// ``PanelState``, writes levels that changed, and waits for a button edge (or simply sleeps)
/// until the next LED change, at most `maximumWait` so posted inputs show promptly. Debounced
/// presses come out of ``presses``. Nothing here blocks the caller or the cooperative pool.
public final class GPIOPanel: ExportIndicator, Sendable {
    /// One element per debounced press of the export button.
    public let presses: AsyncStream<Void>
    private let pressContinuation: AsyncStream<Void>.Continuation
    private let inbox = Mutex(Inbox())
    /// Latency bound for posted inputs (an activity flash 100 ms late is invisible).
    static let maximumWait = Duration.milliseconds(100)

    struct Inbox {
        var inputs: [Input] = []
        var stop = false
        var lastError: GPIOError?
    }

    enum Input: Sendable {
        case status(NodeStatus)
        case checkIn
        case exportStarted
        case exportFinished(success: Bool)
    }

    /// Opens the chip and lines named in `settings` and starts the panel thread. Throws the
    /// first problem (chip missing, permission, line not found or busy) with a clear message.
    public static func start(settings: GPIOSettings, backend: any GPIOBackend, consumer: String = "venue-beacon") async throws(GPIOError)
        -> GPIOPanel
    {
        let panel = GPIOPanel()
        let result: Result<Void, GPIOError> = await withCheckedContinuation { started in
            let thread = Thread {
                panel.run(settings: settings, backend: backend, consumer: consumer) { started.resume(returning: $0) }
            }
            thread.name = "venue-beacon-gpio"
            thread.start()
        }
        try result.get()
        return panel
    }

    private init() {
        (presses, pressContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    public func setStatus(_ status: NodeStatus) { post(.status(status)) }
    /// A visit checked in: the activity LED flashes once.
    public func checkIn() { post(.checkIn) }
    public func exportStarted() { post(.exportStarted) }
    public func exportFinished(success: Bool) { post(.exportFinished(success: success)) }

    /// The last error writing or reading a line (the panel keeps going), for the log.
    public var lastError: GPIOError? { inbox.withLock { $0.lastError } }

    /// Turns the LEDs off, releases the lines and ends ``presses``.
    public func stop() { inbox.withLock { $0.stop = true } }

    private func post(_ input: Input) { inbox.withLock { $0.inputs.append(input) } }

    /// The panel thread.
    private func run(
        settings: GPIOSettings, backend: any GPIOBackend, consumer: String, started: (Result<Void, GPIOError>) -> Void
    ) {
        let chip: any GPIOChip
        var outputs: [(any GPIOOutput, KeyPath<PanelLevels, Bool>)] = []
        var button: (any GPIOButtonInput)?
        do throws(GPIOError) {
            chip = try backend.openChip(settings.chip)
            do throws(GPIOError) {
                let lines: [(GPIOLine?, KeyPath<PanelLevels, Bool>)] = [
                    (settings.statusLED, \.status), (settings.activityLED, \.activity), (settings.exportLED, \.export),
                ]
                for case let (line?, path) in lines {
                    outputs.append((try chip.requestOutput(line, consumer: consumer, activeLow: settings.activeLow), path))
                }
                if let line = settings.button { button = try chip.requestButton(line, consumer: consumer) }
            } catch {
                chip.close()
                throw error
            }
        } catch {
            started(.failure(error))
            return
        }
        started(.success(()))

        let origin = ContinuousClock.now
        var state = PanelState()
        var debouncer = ButtonDebouncer()
        var shown: [Bool?] = Array(repeating: nil, count: outputs.count)
        func now() -> Duration { ContinuousClock.now - origin }
        func record(_ error: GPIOError) { inbox.withLock { $0.lastError = error } }

        while true {
            let (inputs, stop) = inbox.withLock { box in
                defer { box.inputs.removeAll() }
                return (box.inputs, box.stop)
            }
            if stop { break }
            let time = now()
            for input in inputs {
                switch input {
                case .status(let status): state.setStatus(status, at: time)
                case .checkIn: state.checkIn(at: time)
                case .exportStarted: state.exportStarted(at: time)
                case .exportFinished(let success): state.exportFinished(success: success, at: time)
                }
            }
            let levels = state.levels(at: time)
            for (index, (output, path)) in outputs.enumerated() where shown[index] != levels[keyPath: path] {
                do throws(GPIOError) {
                    try output.set(levels[keyPath: path])
                    shown[index] = levels[keyPath: path]
                } catch {
                    record(error)
                }
            }

            let wake = [state.nextChange(after: time), debouncer.deadline, time + Self.maximumWait].compactMap { $0 }.min() ?? time
            let wait = max(wake - time, .milliseconds(1))
            if let button {
                do throws(GPIOError) {
                    let pressed = try button.waitForEdge(timeout: wait)
                    let pressComplete = if let pressed { debouncer.sample(pressed: pressed, at: now()) } else { debouncer.poll(at: now()) }
                    if pressComplete { pressContinuation.yield() }
                } catch {
                    record(error)
                    Thread.sleep(forTimeInterval: Double(LEDPattern.nanoseconds(wait)) / 1e9)
                }
            } else {
                Thread.sleep(forTimeInterval: Double(LEDPattern.nanoseconds(wait)) / 1e9)
            }
        }
        for (output, _) in outputs { try? output.set(false) }
        chip.close()
        pressContinuation.finish()
    }
}
