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

    /// The system's clocks; monotonic seconds count from the moment this is made. Read with
    /// `clock_gettime` straight into seconds: the node reads them several times an advertising
    /// report, and going through `ContinuousClock.Instant` and `Duration.components` (128-bit
    /// arithmetic) cost about 500 instructions a read (BENCHMARKS.md, "Where the instructions go").
    /// The steady clock is `CLOCK_BOOTTIME`, as `ContinuousClock`'s on Linux: it counts suspend.
    public static func system() -> NodeClock {
        let origin = seconds(CLOCK_BOOTTIME)
        return NodeClock(
            monotonic: { seconds(CLOCK_BOOTTIME) - origin },
            wall: { seconds(CLOCK_REALTIME) })
    }

    private static func seconds(_ clock: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(clock, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// Adds this to a monotonic time to get wall time, as of now.
    public var wallOffset: Double { wall() - monotonic() }

    /// `wall − CLOCK_BOOTTIME` as of now, with the boot: constant until the clock is synchronised.
    public var wallMinusBoot: (bootID: String, seconds: Double) {
        let boot = boot()
        return (boot.bootID, wall() - boot.seconds)
    }
}
