import BLEHost
import Logging
import VenueNode

/// The radio loop's ends in the service. The loop itself (``NodeLoop``, with the host engine in
/// ``NodeCore``) runs on the host's thread; this says what it does not own at each tick (the
/// wall time, the phones present in the diary) and carries what it says: sensor events to the
/// ``Recorder``, notices to the log and the hooks (LEDs, systemd's status, readiness and
/// watchdog). All of it is quick and never blocks the host's thread: the recorder takes events
/// into its queue, the hooks send a datagram or set an LED pattern.
struct NodeRadio: Sendable {
    let recorder: Recorder
    let hooks: ServiceHooks
    let clock: NodeClock
    let logger: Logger

    func tick(steady: Double) -> NodeLoop.Tick {
        NodeLoop.Tick(
            wall: clock.wall(), presentPhones: recorder.present, heraldLogRowsDropped: recorder.heraldLogRowsDropped,
            diaryAdmission: recorder.admission)
    }

    func carry(_ output: inout NodeLoop.Output) {
        recorder.submit(output.events)
        for notice in output.notices {
            switch notice {
            case .log(let line): logger.log(line)
            case .radio(let condition): hooks.radio(condition)
            case .ready: hooks.ready()
            case .status(let line): hooks.status(line)
            case .watchdog: hooks.watchdog()
            case .checkOutAll: recorder.checkOutAll()
            case .open(let open): hooks.open(open)
            }
        }
        output.removeAll()
    }
}
