import BLEHost

/// The venue node's radio side as one value: the host engine with the radio loop (``NodeLoop``)
/// on top of it, driven by one owner on one thread — `venue-beacon run`'s host thread
/// (`BluetoothHost`, through ``HostSession``) and the simulated venue's loop alike.
///
/// Everything between the engine and the loop happens inside, at once and in order: the
/// engine's events go to the loop, the loop's requests to the engine, the engine's replies to
/// them back to the loop, and the loop ticks once a second (one of the session's deadlines, so it
/// ticks on while there is no controller). What leaves is what the owner carries out: packets to
/// send and restarts (the returned ``HostAction``s, with replies to requests made from outside,
/// which the command line makes and the node does not), and the loop's ``output``: sensor events
/// for the diary and notices for the log, LEDs and systemd.
///
/// The owner reads ``output`` and then calls ``clearOutput()``, or gives a `sink` that is handed
/// the output in place after every call. A stalled thread stops the loop's
/// ticks with it, and so the watchdog's feeds.
public struct NodeCore: HostSession, Sendable {
    public private(set) var engine: HostEngine
    public private(set) var loop: NodeLoop
    /// Sensor events and notices since the owner last took them (requests are carried inside).
    public private(set) var output = NodeLoop.Output()
    private var nextTick: ContinuousClock.Instant
    /// The loop asked the engine for something in this turn (which may set a timer).
    private var askedEngine = false
    private let steady: @Sendable (ContinuousClock.Instant) -> Double
    private let tickInfo: @Sendable (_ steady: Double) -> NodeLoop.Tick
    private let sink: (@Sendable (inout NodeLoop.Output) -> Void)?

    /// The loop's request ids, in a space of their own in the engine (a request from outside
    /// has its id from the host, which counts from 1).
    private static let loopRequest: UInt64 = 1 << 63

    /// `steady` turns the engine's instants into the node's steady seconds (the event times the
    /// diary is handed); `tickInfo` says at each tick what the loop does not own (the wall time,
    /// present phones). With a `sink`, the output is handed to it after every call (the service);
    /// without, the owner reads it and clears it (``clearOutput()``). The loop's first tick is at
    /// `firstTick`.
    public init(
        engine: HostEngine, loop: NodeLoop, firstTick: ContinuousClock.Instant,
        steady: @escaping @Sendable (ContinuousClock.Instant) -> Double,
        tickInfo: @escaping @Sendable (_ steady: Double) -> NodeLoop.Tick,
        sink: (@Sendable (inout NodeLoop.Output) -> Void)? = nil
    ) {
        self.engine = engine
        self.loop = loop
        self.nextTick = firstTick
        self.steady = steady
        self.tickInfo = tickInfo
        self.sink = sink
        loop.start(into: &output)
        updateDeadline()
    }

    /// The sooner of the loop's next tick and the engine's deadline, as of the last call that could
    /// move it earlier: every call that changes the engine ends in
    /// ``turn(_:now:recomputeDeadline:)`` or ``tick(now:)``, which work it out again (see
    /// ``receive(_:now:)`` for the turns that need not). Working out the engine's walks the link
    /// manager's, the data path's and the command queue's timers: 18 % of the node's instructions
    /// at 200 reports/s when it was worked out at every ask of the host's loop, twice a report
    /// (BENCHMARKS.md, "Where the instructions go").
    public private(set) var nextDeadline: ContinuousClock.Instant?

    /// Empties the output once its owner has carried it out (read ``output``, then call this
    /// after the copy is gone): its arrays keep their capacity, so a turn allocates nothing.
    public mutating func clearOutput() {
        output.removeAll()
    }

    public mutating func start(now: ContinuousClock.Instant) -> [HostAction] {
        turn(engine.start(now: now), now: now)
    }

    public mutating func stop(reason: String, now: ContinuousClock.Instant) -> [HostAction] {
        turn(engine.stop(reason: reason, now: now), now: now)
    }

    public mutating func receive(_ packet: H4Packet, now: ContinuousClock.Instant) -> [HostAction] {
        let actions = engine.receive(packet, now: now)
        // Most packets are advertising reports, and a report sets no engine timer: it only
        // moves the controller's silence probe later (the link manager heard from it). The kept
        // deadline, earlier than the engine's then, is safe: a tick at it finds nothing due and
        // works the deadline out again. Anything else the turn carries (a send, a link, a
        // reply, a request of the loop's) works it out at once, as before.
        let reportsOnly = actions.allSatisfy {
            if case .emit(.advertisingReport) = $0 { return true }
            return false
        }
        return turn(actions, now: now, recomputeDeadline: !reportsOnly)
    }

    public mutating func perform(_ request: HostRequest, id: HostRequestID, now: ContinuousClock.Instant) -> [HostAction] {
        turn(engine.perform(request, id: id, now: now), now: now)
    }

    public mutating func report(_ state: BluetoothState, now: ContinuousClock.Instant) -> [HostAction] {
        turn([.emit(.state(state))], now: now)
    }

    /// The loop's tick when due (first: what it asks for is on the controller's queue before the
    /// engine's timers run), then the engine's timers when due.
    public mutating func tick(now: ContinuousClock.Instant) -> [HostAction] {
        var out: [HostAction] = []
        if now >= nextTick {
            // One tick a second; after a stall, one at once and the next a second later.
            nextTick = max(nextTick + .seconds(1), now)
            let time = steady(now)
            var info = tickInfo(time)
            info.links = engine.linkCount
            loop.handle(.tick(info), now: time, into: &output)
            performRequests(now: now, into: &out)
        }
        if let deadline = engine.nextDeadline, deadline <= now {
            carry(engine.tick(now: now), now: now, into: &out)
        }
        updateDeadline()
        hand()
        return out
    }

    // MARK: Inside

    private mutating func turn(
        _ actions: [HostAction], now: ContinuousClock.Instant, recomputeDeadline: Bool = true
    ) -> [HostAction] {
        var out: [HostAction] = []
        askedEngine = false
        carry(actions, now: now, into: &out)
        if recomputeDeadline || askedEngine { updateDeadline() }
        hand()
        return out
    }

    /// Carries the engine's actions in order; each event or reply the loop takes may make it ask
    /// for more, which are carried out at once (depth first, as a thread calling back would).
    /// What leaves (sends, restarts, replies to requests from outside) goes to `out`.
    private mutating func carry(_ actions: [HostAction], now: ContinuousClock.Instant, into out: inout [HostAction]) {
        for action in actions {
            switch action {
            case .emit(let event):
                loop.handle(.host(event), now: steady(now), into: &output)
                performRequests(now: now, into: &out)
            case .reply(let id, let result) where id.rawValue & Self.loopRequest != 0:
                loop.handle(.reply(HostRequestID(rawValue: id.rawValue & ~Self.loopRequest), result), now: steady(now), into: &output)
                performRequests(now: now, into: &out)
            case .send, .reply, .restart:
                out.append(action)
            }
        }
    }

    private mutating func performRequests(now: ContinuousClock.Instant, into out: inout [HostAction]) {
        while !output.requests.isEmpty {
            askedEngine = true
            let requests = output.requests
            output.requests.removeAll(keepingCapacity: true)
            for (id, request) in requests {
                carry(engine.perform(request, id: HostRequestID(rawValue: id.rawValue | Self.loopRequest), now: now), now: now, into: &out)
            }
        }
    }

    private mutating func updateDeadline() {
        nextDeadline = min(nextTick, engine.nextDeadline ?? nextTick)
    }

    private mutating func hand() {
        sink?(&output)
    }
}
