import Foundation

/// The service's two clocks, injected so tests can drive time: a steady clock for the node's
/// policy and durations (never jumps), and the wall clock for the diary (jumps when the clock is
/// synchronised; the Pi has no real-time clock).
public struct NodeClock: Sendable {
    /// Seconds on a steady clock (the node's time; events carry it).
    public var monotonic: @Sendable () -> Double
    /// Unix seconds.
    public var wall: @Sendable () -> Double

    public init(monotonic: @escaping @Sendable () -> Double, wall: @escaping @Sendable () -> Double) {
        self.monotonic = monotonic
        self.wall = wall
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
}
