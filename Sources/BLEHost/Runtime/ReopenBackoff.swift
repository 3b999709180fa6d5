/// How long to wait before reopening the controller after it failed (transport error, command
/// timeout, hardware error): doubling from `initial` up to `maximum`, back to `initial` once a
/// session has stayed up for `stableAfter`. Pure; the runtime supplies the times.
public struct ReopenBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration
    public var stableAfter: Duration
    private var next: Duration

    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30), stableAfter: Duration = .seconds(60)) {
        self.initial = initial
        self.maximum = maximum
        self.stableAfter = stableAfter
        self.next = initial
    }

    /// The delay before the next attempt, given how long the session that just ended was up
    /// (nil: it never came up).
    public mutating func delay(afterSessionLasting uptime: Duration?) -> Duration {
        if let uptime, uptime >= stableAfter { next = initial }
        let delay = next
        next = min(next * 2, maximum)
        return delay
    }
}
