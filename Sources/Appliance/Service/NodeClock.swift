import Foundation

/// The service's clocks, injected so tests can drive time: a steady clock for the node's policy
/// and durations (never jumps), the wall clock for the diary (jumps when the clock is
/// synchronised; the Pi has no real-time clock), and the boot clock with the boot's id, which
/// lets visits recorded before sync be corrected later (see `DiaryClock`).
public struct NodeClock: Sendable {
    /// Seconds on a steady clock (the node's time; events carry it).
    public var monotonic: @Sendable () -> Double
    /// Unix seconds.
    public var wall: @Sendable () -> Double
    /// CLOCK_BOOTTIME and the boot it belongs to.
    public var boot: @Sendable () -> BootTime

    public init(
        monotonic: @escaping @Sendable () -> Double, wall: @escaping @Sendable () -> Double,
        boot: @escaping @Sendable () -> BootTime = { BootTime.now() }
    ) {
        self.monotonic = monotonic
        self.wall = wall
        self.boot = boot
    }

    /// The system's clocks; monotonic seconds count from the moment this is made.
    public static func system() -> NodeClock {
        let origin = ContinuousClock.now
        return NodeClock(
            monotonic: {
                let elapsed = ContinuousClock.now - origin
                return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            },
            wall: { Date().timeIntervalSince1970 })
    }

    /// Adds this to a monotonic time to get wall time, as of now.
    public var wallOffset: Double { wall() - monotonic() }

    /// `wall − CLOCK_BOOTTIME` as of now, with the boot: constant until the clock is synchronised.
    public var wallMinusBoot: (bootID: String, seconds: Double) {
        let boot = boot()
        return (boot.bootID, wall() - boot.seconds)
    }
}
