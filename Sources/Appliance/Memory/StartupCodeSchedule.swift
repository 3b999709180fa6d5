import Herald

/// When the node pages its start-up code out (``StartupCode``): at once when the radio first
/// runs and the service has said READY, because start-up is then over (the config, the argument
/// parser, the diary's opening and migrations, the controller's set-up, the notification) and the
/// crowd's memory has not arrived yet (after READY, so that it does not delay it); and once more
/// after the radio has run for `lifetime` (what only its first minute ran: the first
/// connections, commits and checks). Never while the radio is starting or unavailable: a node
/// that does not get its radio keeps its code warm for the retries.
///
/// A state machine that answers "page out now" and does nothing itself; the appliance edge
/// keeps it in its shared state and feeds it the radio's changes and its housekeeping's ticks.
struct StartupCodeSchedule {
    /// How long the radio runs before the second page-out; nil: never page out.
    let lifetime: Duration?
    /// How many page-outs were answered (0, 1 when start-up ended, 2 when done).
    private(set) var pageOuts = 0
    /// Since when the radio has run without a break, until the second page-out.
    private var runningSince: ContinuousClock.Instant?
    /// Whether the service has said READY.
    private var ready = false

    init(lifetime: Duration?) {
        self.lifetime = lifetime
    }

    /// The radio's condition changed; true: page out now.
    mutating func radio(_ condition: RadioCondition, now: ContinuousClock.Instant) -> Bool {
        guard pageOuts < 2 else { return false }
        switch condition {
        case .running, .partial:
            guard runningSince == nil else { return false }
            runningSince = now
            return startUpOver()
        case .starting, .unavailable:
            runningSince = nil
            return false
        }
    }

    /// The service said READY (also when its controller failed: it is up and retrying); true:
    /// page out now.
    mutating func readySent() -> Bool {
        ready = true
        return startUpOver()
    }

    /// True once: the first time the radio runs after READY (or READY comes while it runs).
    private mutating func startUpOver() -> Bool {
        guard lifetime != nil, pageOuts == 0, ready, runningSince != nil else { return false }
        pageOuts = 1
        return true
    }

    /// Time passed; true: page out now (the radio has run for the lifetime since start-up).
    mutating func tick(now: ContinuousClock.Instant) -> Bool {
        guard let lifetime, pageOuts == 1, let since = runningSince, now - since >= lifetime else { return false }
        pageOuts = 2
        return true
    }
}
