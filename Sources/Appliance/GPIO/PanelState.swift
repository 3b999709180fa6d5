/// What the node is doing, as the status LED shows it.
public enum NodeStatus: Sendable, Equatable, CaseIterable {
    /// Starting up (opening the controller, the diary).
    case starting
    /// Running, but the system clock is not synchronised yet: visits are stamped with
    /// boot time until it is.
    case waitingForClockSync
    /// Advertising and scanning: all is well.
    case running
    /// Outside opening hours: not advertising or scanning, on purpose.
    case closed
    /// The Bluetooth controller is missing or not answering.
    case bluetoothUnavailable
    /// Something else is wrong (the diary cannot be written, …).
    case fault
    /// The config on the boot partition was refused (`venue-beacon-error.txt` there says why):
    /// the node runs on its previous config.
    case configError
    /// Bluetooth blocked by rfkill, or the controller missing: nothing is advertised or recorded
    /// until an installer acts (`venue-beacon doctor` names the fix).
    case bluetoothBlocked

    /// steady = well; slow blink = wait; fast blink = act; a short blip every 3 s = closed
    /// (alive, but deliberately idle — distinct from off, which means no power or no service);
    /// counted flashes = an installer's mistake: two for a refused config, three for Bluetooth
    /// blocked or missing.
    public var pattern: LEDPattern {
        switch self {
        case .running: return .on
        case .starting, .waitingForClockSync: return LEDTimings.slowBlink
        case .bluetoothUnavailable, .fault: return LEDTimings.fastBlink
        case .closed: return .blink(on: .milliseconds(100), off: .milliseconds(2900))
        case .configError: return LEDTimings.flashes(2)
        case .bluetoothBlocked: return LEDTimings.flashes(3)
        }
    }
}

/// The timings the LEDs use, in one place for the docs and the tests.
public enum LEDTimings {
    public static let slowBlink = LEDPattern.blink(on: .milliseconds(500), off: .milliseconds(500))
    public static let fastBlink = LEDPattern.blink(on: .milliseconds(100), off: .milliseconds(100))
    /// `count` flashes of 0.2 s, 0.3 s apart, then 1.5 s dark: the installer's error codes.
    public static func flashes(_ count: Int) -> LEDPattern {
        .flashes(count: count, on: .milliseconds(200), off: .milliseconds(300), pause: .milliseconds(1500))
    }
    /// Export LED while an export runs.
    public static let exporting = LEDPattern.blink(on: .milliseconds(250), off: .milliseconds(250))
    /// Export LED: steady this long after a delivered export.
    public static let successHold = Duration.seconds(5)
    /// Export LED: fast blink this long after a failed (or only queued) export.
    public static let failureHold = Duration.seconds(10)
    /// Activity LED: one flash per check-in, with a dark gap so several check-ins stay countable.
    public static let flash = Duration.milliseconds(80)
    public static let flashGap = Duration.milliseconds(120)
    /// At most this many flashes wait their turn; more check-ins in a burst are not shown.
    public static let maxPendingFlashes = 5
}

/// The three LEDs' levels at one moment.
public struct PanelLevels: Sendable, Equatable {
    public var status: Bool
    public var activity: Bool
    public var export: Bool

    public init(status: Bool, activity: Bool, export: Bool) {
        self.status = status
        self.activity = activity
        self.export = export
    }
}

/// The LED logic: inputs with the time they happened, levels at any time, and when the levels
/// next change (so a driver can sleep until then). Pure: time is a `Duration` since an origin
/// the caller chooses, so tests run on a manual clock.
public struct PanelState: Sendable {
    public private(set) var status: NodeStatus = .starting
    private var statusSince: Duration = .zero
    /// Start times of activity flashes not yet over.
    private var flashes: [Duration] = []
    private var export: ExportPhase = .idle

    enum ExportPhase: Sendable, Equatable {
        case idle
        case running(since: Duration)
        case succeeded(at: Duration)
        case failed(at: Duration)
    }

    public init() {}

    public mutating func setStatus(_ newStatus: NodeStatus, at time: Duration) {
        guard newStatus != status else { return }
        status = newStatus
        statusSince = time
    }

    /// A visit checked in: one more flash, after the ones still waiting.
    public mutating func checkIn(at time: Duration) {
        flashes.removeAll { $0 + LEDTimings.flash <= time }
        guard flashes.count < LEDTimings.maxPendingFlashes else { return }
        let start = flashes.last.map { max(time, $0 + LEDTimings.flash + LEDTimings.flashGap) } ?? time
        flashes.append(start)
    }

    public mutating func exportStarted(at time: Duration) { export = .running(since: time) }

    public mutating func exportFinished(success: Bool, at time: Duration) {
        export = success ? .succeeded(at: time) : .failed(at: time)
    }

    public func levels(at time: Duration) -> PanelLevels {
        PanelLevels(
            status: status.pattern.level(time - statusSince),
            activity: flashes.contains { $0 <= time && time < $0 + LEDTimings.flash },
            export: exportLevel(at: time))
    }

    /// The first time after `time` at which any level changes; nil when nothing will change
    /// until the next input.
    public func nextChange(after time: Duration) -> Duration? {
        var candidates: [Duration] = []
        if let next = status.pattern.nextChange(after: time - statusSince) { candidates.append(statusSince + next) }
        for start in flashes {
            if start > time { candidates.append(start) }
            if start + LEDTimings.flash > time { candidates.append(start + LEDTimings.flash) }
        }
        switch export {
        case .idle: break
        case .running(let since):
            if let next = LEDTimings.exporting.nextChange(after: time - since) { candidates.append(since + next) }
        case .succeeded(let at):
            if at + LEDTimings.successHold > time { candidates.append(at + LEDTimings.successHold) }
        case .failed(let at):
            let end = at + LEDTimings.failureHold
            if end > time {
                candidates.append(end)
                if let next = LEDTimings.fastBlink.nextChange(after: time - at) { candidates.append(at + next) }
            }
        }
        return candidates.filter { $0 > time }.min()
    }

    private func exportLevel(at time: Duration) -> Bool {
        switch export {
        case .idle: return false
        case .running(let since): return LEDTimings.exporting.level(time - since)
        case .succeeded(let at): return time < at + LEDTimings.successHold
        case .failed(let at): return time < at + LEDTimings.failureHold && LEDTimings.fastBlink.level(time - at)
        }
    }
}

/// Turns a bouncing contact into clean presses: a level counts once it has held for `settle`
/// (50 ms). A press is reported once, when the pressed level has settled; it re-arms when the
/// released level has settled. Pure, on the same time base as ``PanelState``.
public struct ButtonDebouncer: Sendable {
    public let settle: Duration
    private var raw = false
    private var rawSince: Duration = .zero
    private var stable = false

    public init(settle: Duration = .milliseconds(50)) { self.settle = settle }

    /// The line was seen at `pressed` at `time` (after an edge, or when polled).
    /// Returns true when this completes a press.
    public mutating func sample(pressed: Bool, at time: Duration) -> Bool {
        if pressed != raw {
            raw = pressed
            rawSince = time
        }
        return poll(at: time)
    }

    /// Time passed without an edge. Returns true when this completes a press.
    public mutating func poll(at time: Duration) -> Bool {
        guard raw != stable, time - rawSince >= settle else { return false }
        stable = raw
        return stable
    }

    /// When a level seen but not yet settled will settle: the driver must look again then.
    public var deadline: Duration? { raw != stable ? rawSince + settle : nil }
}
