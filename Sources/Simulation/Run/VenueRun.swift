import BLEHost
import Foundation
import Herald
import VenueDiary
import VenueNode

/// The venue node on the simulated air: the node exactly as `venue-beacon run` composes it —
/// the host engine (link manager, ACL/L2CAP, ATT/GATT, the venue's GATT database), the radio
/// loop (``NodeLoop``: the node driver around the Herald policy, the appliance's decisions) with
/// the signal write gate, and the diary loop (``DiaryKeeper``: the diary pipeline, its clock and
/// its timing, the Herald-format logs) — driven on virtual time instead of by the service's
/// threads. This is the shell; every decision is the loops'.
///
/// Why not the service's own shells: they run on the wall clock (a host thread, a radio loop
/// ticking every wall second, a recorder thread), so at a speed-up their timing would drift apart
/// and no two runs would be alike. Here one loop hands every piece the same virtual time, so a
/// seed repeats a run exactly and a venue's hours pass as fast as the CPU computes them.
///
/// The loop: the node ticks once per virtual second (as `NodeRadio` does) and the diary with it
/// (as the recorder does); between ticks the air runs to the host engine's next deadline or the
/// next packet, and every packet, event, request and reply is carried at once. The virtual
/// wall clock is synchronised from the start; the venue has opening hours only when given a
/// schedule (a multi-day run, ``MultiDayRun``).
public struct VenueRun {
    /// What the loop carried, for the status line and the report.
    public struct Counters: Sendable, Equatable {
        /// Check-ins, check-outs, write errors: the diary loop's own counts.
        public var diary = DiaryKeeper.Counters()
        /// The engine asked for a controller restart (never expected on the simulated air).
        public var restarts = 0
    }

    public let truth: GroundTruth
    public let identity: VenueBeaconIdentity
    public private(set) var air: Air
    /// The host engine with the radio loop on top, as `venue-beacon run`'s host thread drives it.
    public private(set) var core: NodeCore
    public private(set) var keeper: DiaryKeeper
    /// Payloads the node learned (reads and writes), in virtual seconds.
    public private(set) var reads: [PayloadRead] = []
    /// Whether ``reads`` are kept (a run of many days, which does not report them, turns it off
    /// rather than have them grow for the whole run).
    public var keepsReads = true
    private var notices: [DiaryKeeper.Notice] = []
    private var restarts = 0
    /// The air's time as the node's steady time: the core is handed the very `Double` the air
    /// keeps (turning the engine's instant back into seconds would round differently).
    private let steadyNow: VirtualNow
    private var nextTick = 0.0
    private var origin: Double { truth.configuration.origin }

    /// Builds the node over `store` (the diary file of the run); `heraldLogs` writes Herald-format
    /// logs as `venue-beacon run` does (`simulate --herald-logs`); `schedule` is the opening hours
    /// the radio loop keeps, as `run` keeps `[schedule]` (nil: open around the clock).
    public init(
        truth: GroundTruth, setup: NodeSetup = NodeSetup(), air: AirConfiguration = AirConfiguration(), store: DiaryStore,
        heraldLogs: HeraldLogWriter? = nil, schedule: Schedule? = nil
    ) throws {
        self.truth = truth
        let air = Air(truth: truth, configuration: air)
        self.air = air
        identity = try setup.identity()
        let gate = SignalWriteGate()
        let origin = truth.configuration.origin
        let base = air.instant(0)
        let steadyNow = VirtualNow()
        self.steadyNow = steadyNow
        let loop = NodeLoop(
            driver: try setup.driver(), schedule: schedule, wall: origin, deviceName: Air.name, venueName: setup.beacon.name ?? "")
        // Outside opening hours at start the radio starts switched off, as in `run`.
        let switchedOn = RadioState(advertising: loop.isOpen, scanning: loop.isOpen)
        core = NodeCore(
            engine: HostEngine(configuration: try setup.hostConfiguration(identity: identity, gate: gate, switchedOn: switchedOn)),
            loop: loop,
            firstTick: base, steady: { _ in steadyNow.value },
            // The status line's present phones are not shown here; the wall is virtual.
            tickInfo: { NodeLoop.Tick(wall: origin + $0) })
        keeper = try DiaryKeeper(
            store: store, path: "simulated diary", settings: setup.diary, heraldLogs: heraldLogs, steady: 0, wall: origin,
            synchronised: true, boot: .init(bootID: "simulated", wallMinusBoot: origin), notices: &notices)
        carry(core.report(.opening(Air.name), now: base))
        carry(core.start(now: base))
    }

    /// Virtual seconds since the venue opened.
    public var now: Double { air.now }

    /// The radio loop (opening hours, watchdog, the node driver).
    public var loop: NodeLoop { core.loop }
    /// The node driver (the Herald policy and its connections).
    public var driver: NodeDriver { core.loop.driver }
    /// The diary pipeline.
    public var pipeline: DiaryPipeline { keeper.pipeline }

    /// What the loop carried.
    public var counters: Counters { Counters(diary: keeper.counters, restarts: restarts) }

    /// Runs until virtual time `end` (or the first moment after it the loop reaches).
    public mutating func run(until end: Double) {
        while air.now < end {
            if air.now >= nextTick {
                // The radio loop's tick is due with it (its deadline is the same second).
                carry(core.tick(now: instant()))
                // The simulated clock is synchronised from the start: nothing to ask.
                try? keeper.tick(steady: air.now, wall: origin + air.now, synchronisation: { nil }, into: &notices)
                notices.removeAll(keepingCapacity: true)
                nextTick += 1
            }
            var limit = min(end, nextTick)
            if let deadline = core.nextDeadline {
                limit = min(limit, max(air.now, Air.seconds(from: air.instant(0), to: deadline)))
            }
            for packet in air.advance(until: limit) {
                carry(core.receive(packet, now: instant()))
            }
            if let deadline = core.nextDeadline, deadline <= air.instant(air.now) {
                carry(core.tick(now: instant()))
            }
        }
    }

    /// Writes the diary's last batch. Run until the last departure plus the check-out limit
    /// first, so every visit has been closed at its last sighting.
    public mutating func finish() {
        try? keeper.close(steady: air.now, into: &notices)  // counted in the keeper's counters
        notices.removeAll()
    }

    /// The air's instant now, with the steady time the core reads set to match.
    private func instant() -> ContinuousClock.Instant {
        steadyNow.value = air.now
        return air.instant(air.now)
    }

    /// Carries what left the node's core: packets to the air, sensor events to the diary,
    /// closing time to the diary.
    private mutating func carry(_ actions: [HostAction]) {
        for action in actions {
            switch action {
            case .send(let packet): air.send(packet)
            case .restart: restarts += 1
            case .emit, .reply: break  // nothing is asked from outside the core here
            }
        }
        do {
            // Read in place; cleared once this copy is gone, so the output's arrays are reused.
            let output = core.output
            guard !output.isEmpty else { return }
            for event in output.events {
                if keepsReads, case .read(_, let payload, let earlier, let time) = event, payload.kind == .herald {
                    reads.append(PayloadRead(time: time, payload: payload.bytes, earliestAttributed: earlier.map(\.time).min()))
                }
            }
            keeper.record(output.events, steady: air.now, wall: origin + air.now)
            for notice in output.notices where notice == .checkOutAll {
                keeper.checkOutAll(steady: air.now, into: &notices)
            }
        }
        core.clearOutput()
    }
}

extension Air {
    /// The transport name the node sees.
    public static let name = "simulated-air"

    /// Seconds of virtual time between two instants of the air's clock.
    public static func seconds(from base: ContinuousClock.Instant, to instant: ContinuousClock.Instant) -> Double {
        let c = base.duration(to: instant).components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}

/// The simulated air's time, for the node's core to read as its steady time.
private final class VirtualNow: @unchecked Sendable {
    /// Set and read on the one thread that drives the run.
    var value = 0.0
}
