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
    public internal(set) var air: Air
    /// The host engine with the radio loop on top, as `venue-beacon run`'s host thread drives it.
    public internal(set) var core: NodeCore
    public internal(set) var keeper: DiaryKeeper
    /// The diary the keeper writes (a new connection to the same file after each restart).
    public internal(set) var store: DiaryStore
    /// Payloads the node learned (reads and writes), in virtual seconds.
    public private(set) var reads: [PayloadRead] = []
    /// Whether ``reads`` are kept (a run of many days, which does not report them, turns it off
    /// rather than have them grow for the whole run).
    public var keepsReads = true
    var notices: [DiaryKeeper.Notice] = []
    var restarts = 0
    /// The air's time as the node's steady time: the core is handed the very `Double` the air
    /// keeps (turning the engine's instant back into seconds would round differently).
    let steadyNow: VirtualNow
    var nextTick = 0.0
    var origin: Double { truth.configuration.origin }
    /// What a restart builds the node from again.
    let setup: NodeSetup
    let schedule: Schedule?
    let diaryPath: String?
    /// The wall clock's error (seconds added to true time): a step, a slow clock after a restart.
    let wallError: VirtualNow
    /// The controller's session, as `BluetoothHost`'s thread keeps it (``VenueRun+Faults.swift``).
    var session = ControllerSession.up(since: 0)
    var backoff = ReopenBackoff()
    /// The controller is away until then (a fault): opening it fails.
    var controllerAbsentUntil = -Double.infinity
    /// The node is off (a power cut) until it starts again.
    var powered = true
    /// This boot: its id, the virtual time it began, and when the clock synchronises (nil: at start).
    var boot = (id: "simulated", start: 0.0, synchronisesAt: Optional<Double>.none)
    var boots = 0
    /// The faults still to inject, and what those injected did.
    var faultActions = TimedEventHeap<FaultAction>()
    var faultsInProgress: [Int: FaultOutcome] = [:]
    var faultOutcomes: [FaultOutcome] = []
    var faultCount = 0
    /// The counts of the diary loops before the last restart (a restart starts a new keeper).
    var earlierKeepers = DiaryKeeper.Counters()
    var earlierPurged = 0
    var controllerFault: Int?
    var clockFaultEnding: Int?
    var unsynchronisedFault: Int?
    /// A deadline that ticking the core without a controller does not move (as `BluetoothHost`'s
    /// pause, which does not tick it again).
    var stuckDeadline: ContinuousClock.Instant?

    /// Builds the node over `store` (the diary file of the run); `heraldLogs` writes Herald-format
    /// logs as `venue-beacon run` does (`simulate --herald-logs`); `schedule` is the opening hours
    /// the radio loop keeps, as `run` keeps `[schedule]` (nil: open around the clock).
    /// `diaryPath`, the file of `store`, is what a restart (a fault) opens again.
    public init(
        truth: GroundTruth, setup: NodeSetup = NodeSetup(), air: AirConfiguration = AirConfiguration(), store: DiaryStore,
        diaryPath: String? = nil, heraldLogs: HeraldLogWriter? = nil, schedule: Schedule? = nil
    ) throws {
        self.truth = truth
        let air = Air(truth: truth, configuration: air)
        self.air = air
        self.setup = setup
        self.schedule = schedule
        self.diaryPath = diaryPath
        self.store = store
        identity = try setup.identity()
        let origin = truth.configuration.origin
        let steadyNow = VirtualNow()
        self.steadyNow = steadyNow
        let wallError = VirtualNow()
        self.wallError = wallError
        core = try Self.node(setup: setup, identity: identity, schedule: schedule, air: air, steadyNow: steadyNow, wallError: wallError, origin: origin)
        keeper = try DiaryKeeper(
            store: store, path: "simulated diary", settings: setup.diary, heraldLogs: heraldLogs, steady: 0, wall: origin,
            synchronised: true, boot: .init(bootID: "simulated", wallMinusBoot: origin), notices: &notices)
        let base = air.instant(0)
        carry(core.report(.opening(Air.name), now: base))
        carry(core.start(now: base))
    }

    /// The radio side as `run` composes it at a start: the host engine and the radio loop, with
    /// the radio off when the wall clock says the venue is closed.
    static func node(
        setup: NodeSetup, identity: VenueBeaconIdentity, schedule: Schedule?, air: Air, steadyNow: VirtualNow, wallError: VirtualNow,
        origin: Double
    ) throws -> NodeCore {
        let now = air.now
        let loop = NodeLoop(
            driver: try setup.driver(), schedule: schedule, wall: origin + now + wallError.value, deviceName: Air.name,
            venueName: setup.beacon.name ?? "")
        // Outside opening hours at start the radio starts switched off, as in `run`.
        let switchedOn = RadioState(advertising: loop.isOpen, scanning: loop.isOpen)
        // Signal writes rate-limited as in `run`, on the air's virtual time (the engine's).
        return NodeCore(
            engine: HostEngine(
                configuration: try setup.hostConfiguration(identity: identity, gate: SignalWriteGate(rateLimit: .node), switchedOn: switchedOn)),
            loop: loop,
            firstTick: air.instant(now.rounded(.up)), steady: { _ in steadyNow.value },
            // The status line's present phones are not shown here; the wall is virtual (and wrong
            // by the wall clock's error, as a stepped or unsynchronised clock is).
            tickInfo: { NodeLoop.Tick(wall: origin + $0 + wallError.value) })
    }

    /// The wall clock now, as the node reads it.
    var wall: Double { origin + air.now + wallError.value }

    /// Virtual seconds since the venue opened.
    public var now: Double { air.now }

    /// The radio loop (opening hours, watchdog, the node driver).
    public var loop: NodeLoop { core.loop }
    /// The node driver (the Herald policy and its connections).
    public var driver: NodeDriver { core.loop.driver }
    /// The diary pipeline.
    public var pipeline: DiaryPipeline { keeper.pipeline }

    /// What the loop carried.
    public var counters: Counters {
        var diary = keeper.counters
        Self.add(earlierKeepers, to: &diary)
        return Counters(diary: diary, restarts: restarts)
    }

    /// The visit counts of a diary keeper before a restart, added to `total` (the log's counts
    /// are the current keeper's own).
    static func add(_ earlier: DiaryKeeper.Counters, to total: inout DiaryKeeper.Counters) {
        total.checkIns += earlier.checkIns
        total.checkOuts += earlier.checkOuts
        total.reopened += earlier.reopened
        total.walkPasts += earlier.walkPasts
        total.writeErrors += earlier.writeErrors
    }

    /// Visits the diary's retention deleted since the run began (over restarts).
    public var purgedVisits: Int { earlierPurged + keeper.pipeline.counters.purged }

    /// Runs until virtual time `end` (or the first moment after it the loop reaches).
    public mutating func run(until end: Double) {
        while air.now < end {
            injectDueFaults()
            let nextFault = faultActions.nextTime ?? .infinity
            guard powered else {
                // The node is off: the air goes on, nothing hears it.
                _ = air.advance(until: min(end, nextFault))
                continue
            }
            if case .closed(let reopenAt) = session, air.now >= reopenAt {
                reopen()
            }
            if air.now >= nextTick {
                // The radio loop's tick is due with it (its deadline is the same second).
                carry(core.tick(now: instant()))
                let now = air.now
                let synchronisesAt = boot.synchronisesAt
                let reading = DiaryKeeper.BootReading(bootID: boot.id, wallMinusBoot: wall - (now - boot.start))
                try? keeper.tick(
                    steady: now, wall: wall, synchronisation: { synchronisesAt.map { now >= $0 } ?? true ? reading : nil }, into: &notices)
                noteFaultNotices()
                notices.removeAll(keepingCapacity: true)
                nextTick += 1
            }
            var limit = min(end, nextTick, nextFault)
            if case .closed(let reopenAt) = session { limit = min(limit, max(air.now, reopenAt)) }
            if let deadline = core.nextDeadline, deadline != stuckDeadline {
                limit = min(limit, max(air.now, Air.seconds(from: air.instant(0), to: deadline)))
            }
            for packet in air.advance(until: limit) where session.isUp {
                carry(core.receive(packet, now: instant()))
            }
            if let deadline = core.nextDeadline, deadline != stuckDeadline, deadline <= air.instant(air.now) {
                carry(core.tick(now: instant()))
                if !session.isUp, core.nextDeadline == deadline { stuckDeadline = deadline }
            }
        }
    }

    /// Writes the diary's last batch. Run until the last departure plus the check-out limit
    /// first, so every visit has been closed at its last sighting.
    public mutating func finish() {
        guard powered else { return }
        try? keeper.close(steady: air.now, into: &notices)  // counted in the keeper's counters
        notices.removeAll()
    }

    /// The air's instant now, with the steady time the core reads set to match.
    func instant() -> ContinuousClock.Instant {
        steadyNow.value = air.now
        return air.instant(air.now)
    }

    /// Carries what left the node's core: packets to the air, sensor events to the diary,
    /// closing time to the diary.
    mutating func carry(_ actions: [HostAction]) {
        var restart: String?
        for action in actions {
            switch action {
            case .send(let packet):
                // No transport while the session is closed (BluetoothHost drops them alike).
                if session.isUp, restart == nil { air.send(packet) }
            case .restart(let reason):
                restarts += 1
                restart = restart ?? reason
            case .emit, .reply: break  // nothing is asked from outside the core here
            }
        }
        // The engine asked for the controller to be reopened: the session ends, as in `run`.
        if let restart, session.isUp { endSession(reason: restart) }
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

/// The simulated air's time, for the node's core to read as its steady time (and the wall
/// clock's error, for its wall time).
final class VirtualNow: @unchecked Sendable {
    /// Set and read on the one thread that drives the run.
    var value = 0.0
}
