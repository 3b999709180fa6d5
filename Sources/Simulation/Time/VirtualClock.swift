/// Time in a simulated venue: virtual seconds since the venue opened.
///
/// Nothing in the simulation reads a real clock for its own time: every device, the air and the
/// node are driven from one of these, so hours of venue time run in seconds and a seed repeats a
/// run exactly. ``origin`` ties virtual time to the wall-clock Unix seconds that the diary stores.
public struct VirtualClock: Sendable, Equatable {
    /// Unix seconds at virtual time 0 (when the venue opens).
    public let origin: Double
    /// Virtual seconds since the venue opened.
    public private(set) var now: Double

    public init(origin: Double, now: Double = 0) {
        self.origin = origin
        self.now = now
    }

    /// Moves time forward to `time`; earlier times leave it where it is (time never runs back).
    public mutating func advance(to time: Double) {
        if time > now { now = time }
    }

    /// The current time as wall-clock Unix seconds.
    public var unixTime: Double { origin + now }

    /// Virtual seconds for a wall-clock Unix time.
    public func virtualTime(ofUnix unix: Double) -> Double { unix - origin }
}

/// How fast virtual time runs against wall time.
public enum Pacing: Sendable, Equatable, CustomStringConvertible {
    /// As fast as the CPU allows.
    case unpaced
    /// This many virtual seconds per wall second (1 is real time).
    case speedUp(Double)

    /// The speeds `--speed` takes: from 100 wall seconds per virtual second to a million times
    /// real time (beyond that a run is CPU-bound anyway: use max).
    public static let speeds: ClosedRange<Double> = 0.01...1_000_000

    /// Parses `max` or a number in ``speeds`` (the CLI's `--speed`).
    public init?(_ text: String) {
        if text == "max" {
            self = .unpaced
        } else if let x = Double(text), Self.speeds.contains(x) {
            self = .speedUp(x)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .unpaced: return "max"
        case .speedUp(let x): return "\(x)x"
        }
    }
}

/// Holds a run to its pacing: how long the driver must wait before virtual time `t` may happen.
///
/// Pure arithmetic on instants the caller supplies (the driver reads the wall clock and sleeps),
/// so it is exact under test. A run that falls behind (the CPU is slower than the speed-up) is
/// not made to catch up in a burst beyond what it lost: it simply runs unpaced until it is back
/// on schedule.
public struct Pacer: Sendable {
    public let pacing: Pacing
    public let startVirtual: Double
    public let startWall: ContinuousClock.Instant

    public init(pacing: Pacing, startVirtual: Double, startWall: ContinuousClock.Instant) {
        self.pacing = pacing
        self.startVirtual = startVirtual
        self.startWall = startWall
    }

    /// The wall instant at which virtual time `t` is due; nil when unpaced.
    public func deadline(forVirtual t: Double) -> ContinuousClock.Instant? {
        guard case .speedUp(let x) = pacing else { return nil }
        // Bounded so that no speed and no virtual time can overflow the instant (a century).
        let wallSeconds = min(max(0, t - startVirtual) / x, 3.2e9)
        return startWall + .nanoseconds(Int64((wallSeconds * 1e9).rounded()))
    }

    /// How long to wait at `wallNow` before virtual time `t`: zero when unpaced or already late.
    public func delay(untilVirtual t: Double, wallNow: ContinuousClock.Instant) -> Duration {
        guard let deadline = deadline(forVirtual: t), deadline > wallNow else { return .zero }
        return wallNow.duration(to: deadline)
    }
}
