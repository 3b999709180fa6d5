import Foundation
import Testing
import VenueDiary
import VenueNode

@testable import Simulation

/// Each fault of `simulate --days --faults` through the node's own loop, on virtual time: one
/// phone at the venue, one fault, what the loop did and what the diary holds after.
@Suite struct VenueRunFaultTests {
    /// Runs `truth` with `faults` into a fresh diary file until the phone's departure plus the
    /// check-out limit; returns the diary's visits, the faults' outcomes and the run.
    static func run(
        _ truth: GroundTruth, faults: [Fault], watch: (VenueRun) -> Void = { _ in }
    ) throws -> (visits: [Visit], outcomes: [FaultOutcome], run: VenueRun) {
        let path = NSTemporaryDirectory() + "venue-run-fault-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var run = try VenueRun(truth: truth, store: try DiaryStore(path: path), diaryPath: path)
        run.inject(FaultSchedule(faults: faults))
        let end = truth.lastDeparture + truth.configuration.checkOutSeconds + 5
        while run.now < end {
            run.run(until: min(end, run.now + 10))
            watch(run)
        }
        run.finish()
        return (try DiaryStore(path: path).visits(), run.takeFaultOutcomes(), run)
    }

    @Test func aLostControllerIsReopenedWithTheHostsBackoffAndTheVisitGoesOn() throws {
        let truth = VenueRunTests.single(.heraldAndroid)  // present 100–1000 s
        var scanningDuringLoss = false
        let (_, outcomes, run) = try Self.run(truth, faults: [.controllerLost(at: 400, seconds: 30)]) { r in
            if r.now > 405, r.now < 425, r.air.controller.scanning { scanningDuringLoss = true }
        }
        let report = EfficacyReport(truth: truth, diary: try run.store.visits())
        VenueRunTests.expectOneGoodVisit(report)
        #expect(!scanningDuringLoss)
        // BluetoothHost's backoff: 0.5 s after a session that had been up a minute, then 1, 2, 4,
        // 8, 16 s while the controller is away (until 430 s): the sixth attempt, at 431.5 s, opens it.
        #expect(outcomes.count == 1)
        let outcome = try #require(outcomes.first)
        #expect(outcome.kind == .controllerLost)
        #expect(outcome.reopenAttempts == 6)
        #expect(abs((outcome.over ?? 0) - 431.5) < 0.01)
        #expect(outcome.openVisits == 1)
        // The host initialised the controller again and the radio is back.
        #expect(run.air.controller.scanning && run.air.controller.advertisingEnabled)
        #expect(run.counters.restarts == 0)
        #expect(run.faultsPending == 0)
    }

    @Test func aClockStepAndItsReturnSplitNoVisit() throws {
        let truth = VenueRunTests.single(.heraldAndroid)
        let (visits, outcomes, run) = try Self.run(truth, faults: [.clockStep(at: 400, step: 7200, seconds: 300)])
        let report = EfficacyReport(truth: truth, diary: visits)
        VenueRunTests.expectOneGoodVisit(report)
        // No visit keeps the marks of a clock not trusted.
        let marked = try run.store.uncorrectedVisitCount()
        #expect(marked == 0)
        let outcome = try #require(outcomes.first)
        #expect(outcome.kind == .clockStep && outcome.clockSeconds == 7200)
        #expect(outcome.log.count == 2)
        #expect(outcome.log.first?.contains("stepped +2 h 0 min") == true)
        #expect(outcome.log.last?.contains("back after 5 min") == true)
    }

    @Test func aClockStepThatStandsIsFollowedAfterAnHourWithoutSplittingTheVisit() throws {
        let truth = VenueRunTests.single(.heraldAndroid, from: 100, to: 5000)
        let (visits, outcomes, _) = try Self.run(truth, faults: [.clockStep(at: 400, step: 7200, seconds: 4500)])
        // One visit, followed onto the new clock after an hour: its times moved by the step.
        #expect(visits.count == 1)
        let visit = try #require(visits.first)
        let origin = truth.configuration.origin
        #expect(abs(visit.checkIn - origin - 100 - 7200) < 15)
        let outcome = try #require(outcomes.first)
        #expect(outcome.log.contains { $0.contains("has stood for 1 h 0 min: diary time follows it") })
    }

    @Test func aShortPowerCutResumesTheOpenVisitFromTheDiary() throws {
        let truth = VenueRunTests.single(.heraldAndroid)
        let (visits, outcomes, run) = try Self.run(truth, faults: [.powerCut(at: 500, seconds: 60)])
        VenueRunTests.expectOneGoodVisit(EfficacyReport(truth: truth, diary: visits))
        let outcome = try #require(outcomes.first)
        #expect(outcome.kind == .powerCut)
        #expect(outcome.openVisits == 1 && outcome.resumedVisits == 1 && outcome.closedVisits == 0)
        #expect(outcome.log.contains { $0.contains("1 visits resumed") })
        #expect(run.boots == 1)
    }

    @Test func aLongPowerCutClosesTheOpenVisitAtItsLastSighting() throws {
        // Off for 30 min: longer than the check-out limit and a commit interval together.
        let truth = VenueRunTests.single(.heraldAndroid, from: 100, to: 3000)
        let (visits, outcomes, _) = try Self.run(truth, faults: [.powerCut(at: 500, seconds: 1800)])
        let outcome = try #require(outcomes.first)
        #expect(outcome.resumedVisits == 0 && outcome.closedVisits == 1)
        // Two visits: the first closed at its last sighting on disk (before the cut), the second
        // from the restart on.
        #expect(visits.count == 2)
        let origin = truth.configuration.origin
        let sorted = visits.sorted { $0.checkIn < $1.checkIn }
        let first = sorted[0].checkOut ?? .infinity
        #expect(first - origin <= 500 && first - origin > 200)
        #expect(sorted[1].checkIn - origin >= 2300)
    }

    @Test func aStartWithTheClockSlowIsCorrectedWhenItSynchronises() throws {
        // Off at 200 s, back at 230 s with the clock 30 min slow; the phone comes at 1,000 s and
        // is recorded on that clock until it synchronises at 1,500 s.
        let truth = VenueRunTests.single(.heraldAndroid, from: 1000, to: 2000)
        var synchronisedAt: Double?
        let (visits, outcomes, _) = try Self.run(
            truth, faults: [.unsynchronisedStart(at: 200, seconds: 30, clockBehind: 1800, synchronisedAt: 1500)]
        ) { r in
            if synchronisedAt == nil, r.now > 230, r.keeper.synchronised { synchronisedAt = r.now }
        }
        let synchronised = try #require(synchronisedAt)
        #expect(synchronised >= 1500 && synchronised <= 1510)
        VenueRunTests.expectOneGoodVisit(EfficacyReport(truth: truth, diary: visits))
        let outcome = try #require(outcomes.first)
        #expect(outcome.kind == .unsynchronisedStart && outcome.clockSeconds == 1800)
        #expect(outcome.log.contains { $0.contains("stepped +1800 s; corrected the times of 1 visits") })
    }
}
