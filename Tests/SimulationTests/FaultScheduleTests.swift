import Foundation
import Testing
import VenueNode

@testable import Simulation

/// Which fault when (`simulate --days --faults`): pure, from the seed and the opening hours.
@Suite struct FaultScheduleTests {
    static func kind(_ fault: Fault) -> String {
        switch fault {
        case .controllerLost: "controller"
        case .clockStep: "clock"
        case .powerCut: "power"
        case .unsynchronisedStart: "night"
        }
    }

    @Test func eachOpenDayHasOneFaultInTurnAndEveryThirdNightAnUnsynchronisedStart() {
        let days = DaySchedule(schedule: nil, days: 7)  // 09:00–17:00
        let schedule = FaultSchedule(seed: 1, days: days)
        #expect(schedule.faults.map(Self.kind) == [
            "controller", "night", "clock", "power", "controller", "night", "clock", "power", "controller",
        ])
        #expect(schedule.faults.map(\.at) == schedule.faults.map(\.at).sorted())
        // The same seed, the same faults; another seed, other times.
        #expect(FaultSchedule(seed: 1, days: days) == schedule)
        #expect(FaultSchedule(seed: 2, days: days).faults.map(\.at) != schedule.faults.map(\.at))
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func faultsKeepToTheirHoursAndLengths(seed: UInt64) {
        var week = Array(repeating: [OpeningRange(start: 9 * 60, end: 17 * 60)], count: 7)
        week[2] = [OpeningRange(start: 11 * 60, end: 13 * 60)]  // Wednesday: two hours
        week[4] = [OpeningRange(start: 9 * 60, end: 12 * 60), OpeningRange(start: 18 * 60, end: 2 * 60)]  // past midnight
        week[6] = []  // Sunday closed
        let days = DaySchedule(schedule: Schedule(days: week), days: 14)
        let schedule = FaultSchedule(seed: seed, days: days)
        #expect(!schedule.faults.isEmpty)
        for fault in schedule.faults {
            let opening = days.days.flatMap(\.openings).first { $0.open <= fault.at && fault.at < $0.close }
            switch fault {
            case .controllerLost(let at, let seconds):
                #expect(opening != nil && seconds >= 5 && seconds <= 90)
                #expect(at + seconds < (opening?.close ?? 0))
            case .clockStep(let at, let step, let seconds):
                // The stepped clock stays within the opening: the radio loop keeps its hours.
                #expect(opening != nil && step >= 300 && step <= 3 * 3600 && seconds >= 300 && seconds <= 1800)
                #expect(at + seconds + step <= (opening?.close ?? 0) - 600)
            case .powerCut(_, let seconds):
                #expect(opening != nil && seconds >= 20 && seconds <= 120)
            case .unsynchronisedStart(let at, let seconds, let behind, let synchronisedAt):
                // At night, the clock synchronised before the next opening, the lag and half an hour.
                #expect(!days.isOpen(at: at) && !days.isOpen(at: at + seconds))
                #expect(behind >= 300 && behind <= 3600 && synchronisedAt > at + seconds)
                let next = days.days.flatMap(\.openings).first { $0.open > at }
                #expect(synchronisedAt + behind + 1800 <= (next?.open ?? 0))
            }
        }
    }
}
