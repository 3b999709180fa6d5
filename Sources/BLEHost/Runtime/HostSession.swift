/// What a host thread drives through a controller's sessions, without I/O: ``HostEngine`` alone
/// (the command line, whose requests come from other tasks), or the engine with an application's
/// loop on top of it on the same thread (the venue node). Every method takes the time and returns
/// the actions for the thread to carry out, in order.
///
/// A session is one controller lifetime (``start(now:)`` after the transport opened,
/// ``stop(reason:now:)`` when it closed or failed); between sessions the thread keeps calling
/// ``tick(now:)`` at ``nextDeadline`` (sends go nowhere then), so a loop above the engine keeps
/// its own time while there is no controller.
public protocol HostSession {
    /// When ``tick(now:)`` must run next.
    var nextDeadline: ContinuousClock.Instant? { get }
    mutating func start(now: ContinuousClock.Instant) -> [HostAction]
    mutating func stop(reason: String, now: ContinuousClock.Instant) -> [HostAction]
    mutating func receive(_ packet: H4Packet, now: ContinuousClock.Instant) -> [HostAction]
    mutating func perform(_ request: HostRequest, id: HostRequestID, now: ContinuousClock.Instant) -> [HostAction]
    mutating func tick(now: ContinuousClock.Instant) -> [HostAction]
    /// The host thread's own news (opening a controller, waiting to retry it), which no packet
    /// carries: the engine reports it as a ``HostEvent/state(_:)`` event.
    mutating func report(_ state: BluetoothState, now: ContinuousClock.Instant) -> [HostAction]
}

extension HostEngine: HostSession {
    public func report(_ state: BluetoothState, now: ContinuousClock.Instant) -> [HostAction] {
        [.emit(.state(state))]
    }
}
