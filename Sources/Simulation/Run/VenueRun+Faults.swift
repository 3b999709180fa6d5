import BLEHost
import Foundation
import VenueDiary
import VenueNode

/// The controller's session as `BluetoothHost`'s thread keeps it in `venue-beacon run`: up
/// since a time, or closed and reopened at a time (its ``ReopenBackoff``).
enum ControllerSession: Sendable, Equatable {
    case up(since: Double)
    case closed(reopenAt: Double)

    var isUp: Bool { if case .up = self { true } else { false } }
}

/// A step of an injected fault, at a virtual time.
enum FaultAction: Sendable {
    case loseController(fault: Int, back: Double)
    case stepClock(fault: Int, by: Double, back: Bool)
    case powerOff(fault: Int)
    case powerOn(fault: Int, clockBehind: Double?, synchronisesAt: Double?)
}

/// Faults (``FaultSchedule``) injected through the paths the live node takes:
/// - the controller lost: the simulated controller loses its state and links
///   (``Air/controllerLost()``) and the host's session ends as when its transport fails: the
///   core is stopped and told `recovering`, ticks on without a controller, and is reopened after
///   `BluetoothHost`'s backoff (``ReopenBackoff``), each attempt while the controller is away
///   reported `unavailable`, as `run`'s host thread does (that loop runs on the wall clock and a
///   thread, so its order is followed here on virtual time);
/// - a clock step: the wall clock both loops read moves (the radio loop's opening hours, the
///   diary loop's clock, ``DiaryKeeper``);
/// - a power cut: the node stops without a last write (what its diary had not committed is
///   lost), the controller too; at power-on a new boot opens the diary file again with a new
///   ``DiaryStore`` and ``DiaryKeeper`` (open visits resumed or closed at their last sighting,
///   as at any start) and a new host engine and radio loop, with the clock slow and
///   unsynchronised until its time when the fault says so.
extension VenueRun {
    /// Schedules `faults` (those not yet past). Power cuts need the diary's file (`diaryPath`).
    public mutating func inject(_ faults: FaultSchedule) {
        for fault in faults.faults where fault.at >= air.now {
            let i = faultCount
            faultCount += 1
            switch fault {
            case .controllerLost(let at, let seconds):
                faultActions.schedule(.loseController(fault: i, back: at + seconds), at: at)
                faultsInProgress[i] = FaultOutcome(kind: .controllerLost, at: at, seconds: seconds, openVisits: 0)
            case .clockStep(let at, let step, let seconds):
                faultActions.schedule(.stepClock(fault: i, by: step, back: false), at: at)
                faultActions.schedule(.stepClock(fault: i, by: -step, back: true), at: at + seconds)
                var outcome = FaultOutcome(kind: .clockStep, at: at, seconds: seconds, openVisits: 0)
                outcome.clockSeconds = step
                faultsInProgress[i] = outcome
            case .powerCut(let at, let seconds):
                precondition(diaryPath != nil, "a power cut restarts the node from its diary file")
                faultActions.schedule(.powerOff(fault: i), at: at)
                faultActions.schedule(.powerOn(fault: i, clockBehind: nil, synchronisesAt: nil), at: at + seconds)
                faultsInProgress[i] = FaultOutcome(kind: .powerCut, at: at, seconds: seconds, openVisits: 0)
            case .unsynchronisedStart(let at, let seconds, let behind, let synchronisedAt):
                precondition(diaryPath != nil, "a power cut restarts the node from its diary file")
                faultActions.schedule(.powerOff(fault: i), at: at)
                faultActions.schedule(.powerOn(fault: i, clockBehind: behind, synchronisesAt: synchronisedAt), at: at + seconds)
                var outcome = FaultOutcome(kind: .unsynchronisedStart, at: at, seconds: seconds, openVisits: 0)
                outcome.clockSeconds = behind
                faultsInProgress[i] = outcome
            }
        }
    }

    /// What the faults that are over did, since the last call (oldest first).
    public mutating func takeFaultOutcomes() -> [FaultOutcome] {
        defer { faultOutcomes.removeAll() }
        return faultOutcomes
    }

    /// Faults still in progress (begun or not).
    public var faultsPending: Int { faultsInProgress.count }

    // MARK: Inside the loop

    /// Carries out the fault steps due now.
    mutating func injectDueFaults() {
        while let (_, action) = faultActions.pop(notAfter: air.now) {
            switch action {
            case .loseController(let i, let back):
                faultsInProgress[i]?.openVisits = keeper.openVisits
                controllerAbsentUntil = back
                controllerFault = i
                air.controllerLost()
                endSession(reason: "simulated fault: the controller was lost (its transport closed)")
            case .stepClock(let i, let step, let back):
                if !back { faultsInProgress[i]?.openVisits = keeper.openVisits }
                wallError.value += step
                if back { clockFaultEnding = i }
            case .powerOff(let i):
                faultsInProgress[i]?.openVisits = keeper.openVisits
                powerOff()
            case .powerOn(let i, let behind, let synchronisesAt):
                do {
                    var opening: [DiaryKeeper.Notice] = []
                    try powerOn(clockBehind: behind, synchronisesAt: synchronisesAt, notices: &opening)
                    faultsInProgress[i]?.resumedVisits = keeper.pipeline.diary.resumedVisits
                    faultsInProgress[i]?.closedVisits = keeper.pipeline.diary.closedStaleVisits
                    faultsInProgress[i]?.log += opening.compactMap { if case .log(let line) = $0 { line.text } else { nil } }
                    if behind == nil { finishFault(i) } else { unsynchronisedFault = i }
                } catch {
                    faultsInProgress[i]?.log.append("the node could not start again: \(error)")
                    finishFault(i)
                }
            }
        }
    }

    /// The session ends (its transport failed, or the engine asked for a restart): the core is
    /// stopped and told, and the controller reopened after the backoff.
    mutating func endSession(reason: String) {
        guard case .up(let since) = session else { return }
        session = .closed(reopenAt: .infinity)  // no transport: nothing is sent
        carry(core.stop(reason: reason, now: instant()))
        carry(core.report(.recovering(reason), now: instant()))
        session = .closed(reopenAt: air.now + Self.seconds(backoff.delay(afterSessionLasting: .seconds(air.now - since))))
    }

    /// An attempt to open the controller again: it fails while the controller is away.
    mutating func reopen() {
        stuckDeadline = nil
        carry(core.report(.opening(Air.name), now: instant()))
        if let i = controllerFault, var outcome = faultsInProgress[i] {
            outcome.reopenAttempts = (outcome.reopenAttempts ?? 0) + 1
            faultsInProgress[i] = outcome
        }
        guard air.now >= controllerAbsentUntil else {
            carry(core.report(.unavailable("simulated fault: no controller"), now: instant()))
            session = .closed(reopenAt: air.now + Self.seconds(backoff.delay(afterSessionLasting: nil)))
            return
        }
        session = .up(since: air.now)
        carry(core.start(now: instant()))
        if let i = controllerFault {
            controllerFault = nil
            finishFault(i)
        }
    }

    /// After the diary loop's tick: its log lines while a clock fault is on, and the clock
    /// faults it has seen to their end.
    mutating func noteFaultNotices() {
        guard !faultsInProgress.isEmpty else { return }
        let lines = notices.compactMap { notice -> String? in
            guard case .log(let line) = notice, line.level != .info, line.level != .debug else { return nil }
            return line.text
        }
        if !lines.isEmpty {
            for (i, outcome) in faultsInProgress where outcome.over == nil && outcome.at <= air.now {
                if outcome.kind == .clockStep || outcome.kind == .unsynchronisedStart { faultsInProgress[i]?.log += lines }
            }
        }
        if let i = clockFaultEnding {
            clockFaultEnding = nil
            finishFault(i)
        }
        if let i = unsynchronisedFault, keeper.synchronised {
            unsynchronisedFault = nil
            finishFault(i)
        }
    }

    private mutating func finishFault(_ i: Int) {
        guard var outcome = faultsInProgress.removeValue(forKey: i) else { return }
        outcome.over = air.now
        faultOutcomes.append(outcome)
    }

    /// The power fails: no last write, the controller off with the node.
    private mutating func powerOff() {
        guard powered else { return }
        powered = false
        air.controllerLost()
        session = .closed(reopenAt: .infinity)
        notices.removeAll()
    }

    /// A new boot: the diary file opened again, the node built again and started, as `run`
    /// starts. `clockBehind`: the wall clock is that slow, and unsynchronised until
    /// `synchronisesAt`, when it steps right.
    private mutating func powerOn(clockBehind: Double?, synchronisesAt: Double?, notices opening: inout [DiaryKeeper.Notice]) throws {
        guard !powered, let diaryPath else { return }
        boots += 1
        boot = (id: "simulated-boot-\(boots)", start: air.now, synchronisesAt: synchronisesAt)
        wallError.value = -(clockBehind ?? 0)
        if let synchronisesAt { faultActions.schedule(.stepClock(fault: -1, by: clockBehind ?? 0, back: false), at: synchronisesAt) }
        let reopened = try DiaryStore(path: diaryPath)
        let previous = keeper
        keeper = try DiaryKeeper(
            store: reopened, path: "simulated diary", settings: setup.diary, steady: air.now, wall: wall,
            synchronised: clockBehind == nil, boot: .init(bootID: boot.id, wallMinusBoot: wall), notices: &opening)
        store = reopened
        Self.add(previous.counters, to: &earlierKeepers)
        earlierPurged += previous.pipeline.counters.purged
        core = try Self.node(
            setup: setup, identity: identity, schedule: schedule, air: air, steadyNow: steadyNow, wallError: wallError, origin: origin)
        powered = true
        backoff = ReopenBackoff()
        session = .up(since: air.now)
        nextTick = air.now.rounded(.up)  // once a second, as before
        carry(core.report(.opening(Air.name), now: instant()))
        carry(core.start(now: instant()))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
