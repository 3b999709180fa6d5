import BLEHost
import Foundation
import Herald
import VenueDiary
import VenueNode

/// The venue node on the simulated air: the node's pure parts exactly as `venue-beacon run`
/// composes them — the host engine (link manager, ACL/L2CAP, ATT/GATT, the venue's GATT database),
/// the node driver around the Herald node policy, the signal write gate, and the diary pipeline —
/// driven by one loop on virtual time instead of the service's threads.
///
/// Why not the service's own owners: they run on the wall clock (a host thread, a node loop that
/// ticks every wall second, a recorder thread), so at a speed-up their timing would drift apart
/// and no two runs would be alike. Here one loop owns everything and hands each piece the same
/// virtual time, so a seed repeats a run exactly and a venue's hours pass as fast as the CPU
/// computes them. What the pieces decide is unchanged.
///
/// The loop: the node ticks once per virtual second (as `NodeRadio` does) and the diary with it
/// (as the recorder does); between ticks the air runs to the host engine's next deadline or the
/// next packet, and every packet, event, request and reply is carried at once.
public struct VenueRun {
    /// What the loop carried, for the status line and the report.
    public struct Counters: Sendable, Equatable {
        public var checkIns = 0
        public var checkOuts = 0
        /// Checked-out visits that late measurements showed to continue (one visit, not two).
        public var reopened = 0
        public var walkPasts = 0
        public var requests = 0
        public var failedRequests = 0
        /// The engine asked for a controller restart (never expected on the simulated air).
        public var restarts = 0
        public var diaryWriteErrors = 0
        /// Herald-format log flushes that failed (their rows stay pending for the next).
        public var logWriteErrors = 0
    }

    public let truth: GroundTruth
    public let identity: VenueBeaconIdentity
    public private(set) var air: Air
    public private(set) var engine: HostEngine
    public private(set) var driver: NodeDriver
    public private(set) var pipeline: DiaryPipeline
    public private(set) var counters = Counters()
    /// Payloads the node learned (reads and writes), in virtual seconds.
    public private(set) var reads: [PayloadRead] = []
    private let gate: SignalWriteGate
    private var output = NodeDriver.Output()
    private var pending: [HostRequestID: NodeDriver.HostWork] = [:]
    private var nextRequest: UInt64 = 1
    private var nextTick = 0.0
    private var origin: Double { truth.configuration.origin }
    /// The Herald-format logs (`simulate --herald-logs`), written as `venue-beacon run` writes
    /// them: every event recorded at its wall time, flushed every 10 virtual seconds.
    public var heraldLogs: HeraldLogWriter?
    private var nextLogFlush = 10.0

    /// Builds the node over `store` (the diary file of the run).
    public init(truth: GroundTruth, setup: NodeSetup = NodeSetup(), air: AirConfiguration = AirConfiguration(), store: DiaryStore) throws {
        self.truth = truth
        self.air = Air(truth: truth, configuration: air)
        identity = try setup.identity()
        let gate = SignalWriteGate()
        self.gate = gate
        engine = HostEngine(configuration: try setup.hostConfiguration(identity: identity, gate: gate))
        driver = try setup.driver()
        pipeline = DiaryPipeline(diary: try VenueDiary(store: store, settings: setup.diary, now: truth.configuration.origin))
        deliver(.state(.opening(Air.name)))
        execute(engine.start(now: self.air.instant(0)))
    }

    /// Virtual seconds since the venue opened.
    public var now: Double { air.now }

    /// Runs until virtual time `end` (or the first moment after it the loop reaches).
    public mutating func run(until end: Double) {
        while air.now < end {
            if air.now >= nextTick {
                tick()
                nextTick += 1
            }
            var limit = min(end, nextTick)
            if let deadline = engine.nextDeadline {
                limit = min(limit, max(air.now, Air.seconds(from: air.instant(0), to: deadline)))
            }
            for packet in air.advance(until: limit) {
                execute(engine.receive(packet, now: air.instant(air.now)))
            }
            if let deadline = engine.nextDeadline, deadline <= air.instant(air.now) {
                execute(engine.tick(now: air.instant(air.now)))
            }
        }
    }

    /// Writes the diary's last batch. Run until the last departure plus the check-out limit
    /// first, so every visit has been closed at its last sighting.
    public mutating func finish() {
        do {
            count(try pipeline.close(now: origin + air.now))
        } catch {
            counters.diaryWriteErrors += 1
        }
        flushLogs()
    }

    private mutating func flushLogs() {
        do {
            let now = origin + air.now
            try heraldLogs?.flush(now: now)
        } catch {
            counters.logWriteErrors += 1
        }
    }

    // MARK: The loop's pieces

    private mutating func tick() {
        driver.handle(.tick(rejectedWrites: gate.rejected), now: air.now, into: &output)
        drain()
        do {
            count(try pipeline.tick(now: origin + air.now))
        } catch {
            counters.diaryWriteErrors += 1
        }
        if heraldLogs != nil, air.now >= nextLogFlush {
            nextLogFlush = air.now + 10
            flushLogs()
        }
    }

    private mutating func count(_ changes: [VisitChange]) {
        for change in changes {
            switch change.event {
            case .checkedIn: counters.checkIns += 1
            case .checkedOut: counters.checkOuts += 1
            case .walkPast: counters.walkPasts += 1
            case .reopened: counters.reopened += 1
            case .updated: break
            }
        }
    }

    private mutating func deliver(_ event: HostEvent) {
        driver.handle(.host(event), now: air.now, into: &output)
        drain()
    }

    /// Carries the host engine's actions.
    private mutating func execute(_ actions: [HostAction]) {
        for action in actions {
            switch action {
            case .send(let packet):
                air.send(packet)
            case .emit(let event):
                deliver(event)
            case .reply(let id, let result):
                reply(id, result)
            case .restart:
                counters.restarts += 1
            }
        }
    }

    /// Carries the driver's output: sensor events to the diary, work to the host engine.
    private mutating func drain() {
        while !output.events.isEmpty || !output.work.isEmpty {
            let events = output.events
            let work = output.work
            output.removeAll()
            for event in events {
                if case .read(_, let payload, let earlier, let time) = event, payload.kind == .herald {
                    reads.append(PayloadRead(time: time, payload: payload.bytes, earliestAttributed: earlier.map(\.time).min()))
                }
                pipeline.handle(event, wallOffset: origin)
                let wall = event.time + origin
                heraldLogs?.record(event, wallTime: wall)
            }
            for item in work { perform(item) }
        }
    }

    private mutating func perform(_ work: NodeDriver.HostWork) {
        let id = HostRequestID(rawValue: nextRequest)
        nextRequest += 1
        counters.requests += 1
        pending[id] = work
        execute(engine.perform(work.request, id: id, now: air.instant(air.now)))
    }

    private mutating func reply(_ id: HostRequestID, _ result: Result<HostReply, HostError>) {
        guard let work = pending.removeValue(forKey: id) else { return }
        if case .failure = result { counters.failedRequests += 1 }
        guard let input = work.input(for: result) else { return }
        driver.handle(input, now: air.now, into: &output)
        drain()
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
