import Herald
import VenueDiary
import VenueNode

/// Where the appliance edge plugs into `venue-beacon run`: systemd notify, LEDs, the export
/// button, clock sync. Every hook is called from one of the service's own loops and must return
/// quickly (hand slow work to a task of its own); the defaults do nothing.
public struct ServiceHooks: Sendable {
    /// Advertising and scanning both run for the first time (systemd `READY=1`). Called once.
    public var ready: @Sendable () -> Void
    /// About once a second from the loop that handles Bluetooth, while that loop turns and the
    /// host's thread shows signs of life (an event, or an answer to a probe, within 20 s; always
    /// while no controller is up, since waiting for one is no stall). systemd `WATCHDOG=1`: a
    /// stalled loop or host stops the pings and systemd restarts the service.
    public var watchdog: @Sendable () -> Void
    /// A one-line summary whenever it changes (systemd `STATUS=`).
    public var status: @Sendable (String) -> Void
    /// The node's Bluetooth condition changed (the status LED). Advertising and scanning pause
    /// for a moment around every connection (`.partial`): debounce before blinking.
    public var radio: @Sendable (RadioCondition) -> Void
    /// Opening hours: whether the venue is open, at start and at every change, from the radio
    /// loop (the status LED shows "closed"). Never called without a schedule.
    public var open: @Sendable (Bool) -> Void
    /// Visits checked in or out, and walk-pasts, as the diary reports them once a second (the
    /// activity LED flashes on check-ins). Called on the diary's thread.
    public var visits: @Sendable ([VisitChange]) -> Void
    /// SIGUSR1 (and the button): export the share window and deliver it. nil: not available, the
    /// signal is logged and ignored. One export at a time: signals during an export are ignored.
    public var export: (@Sendable () async -> Void)?
    /// Whether the wall clock is synchronised. Read by the recorder at start and then every second
    /// until it first holds: the diary keeper then corrects the visits this boot recorded before.
    /// Retention does not wait for it: before sync it purges on the diary's own clock (the wall
    /// time at start, run on the steady clock), which never overstates an age.
    public var clockSynchronised: @Sendable () -> Bool
    /// The service is shutting down (systemd `STOPPING=1`).
    public var stopping: @Sendable () -> Void

    public init(
        ready: @escaping @Sendable () -> Void = {}, watchdog: @escaping @Sendable () -> Void = {},
        status: @escaping @Sendable (String) -> Void = { _ in }, radio: @escaping @Sendable (RadioCondition) -> Void = { _ in },
        open: @escaping @Sendable (Bool) -> Void = { _ in },
        visits: @escaping @Sendable ([VisitChange]) -> Void = { _ in }, export: (@Sendable () async -> Void)? = nil,
        clockSynchronised: @escaping @Sendable () -> Bool = { true }, stopping: @escaping @Sendable () -> Void = {}
    ) {
        self.ready = ready
        self.watchdog = watchdog
        self.status = status
        self.radio = radio
        self.open = open
        self.visits = visits
        self.export = export
        self.clockSynchronised = clockSynchronised
        self.stopping = stopping
    }
}
