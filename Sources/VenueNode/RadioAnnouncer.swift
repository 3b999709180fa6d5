import Herald

/// Decides how loudly a radio condition is logged. Advertising and scanning pause for a moment
/// around every connection (the controller creates one connection at a time, and connectable
/// advertising stops when a phone connects), so those pauses are debug lines; coming up,
/// recovering and failing are not. A pause that lasts is reported once.
public struct RadioAnnouncer: Sendable {
    public enum Level: Sendable { case debug, info, warning }

    /// How long advertising or scanning may stay paused before it is worth a notice.
    public static let lastingPause: Double = 30

    private var current = RadioCondition.starting
    private var wasRunning = false
    private var pausedSince: Double?
    private var pauseReported = false

    public init() {}

    public mutating func change(to condition: RadioCondition, now: Double) -> Level {
        defer { current = condition }
        switch condition {
        case .starting:
            wasRunning = false
            pausedSince = nil
            return .info
        case .unavailable:
            wasRunning = false
            pausedSince = nil
            return .warning
        case .running:
            pausedSince = nil
            let level: Level = wasRunning ? .debug : .info
            wasRunning = true
            return level
        case .partial:
            if pausedSince == nil {
                pausedSince = now
                pauseReported = false
            }
            return .debug
        }
    }

    /// The condition, once, when a pause has lasted `lastingPause`.
    public mutating func tick(now: Double) -> RadioCondition? {
        guard let since = pausedSince, !pauseReported, now - since >= Self.lastingPause else { return nil }
        pauseReported = true
        return current
    }
}
