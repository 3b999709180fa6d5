/// A fault a multi-day run injects into the node (`simulate --days N --faults`), in virtual
/// seconds from the first midnight. Each is carried out through the path the live node takes
/// (``VenueRun``): the controller's transport closing and the host reopening it with its backoff,
/// the wall clock the radio loop and the diary loop read, the node restarted from its diary file.
public enum Fault: Sendable, Equatable {
    /// The controller is lost at `at` for `seconds` (a USB adapter that drops off the bus): the
    /// host's session ends, and it tries to reopen the controller with its backoff until it is
    /// back.
    case controllerLost(at: Double, seconds: Double)
    /// The wall clock steps by `step` seconds at `at` and back `seconds` later, while the venue
    /// is open and the clock synchronised (a bad time server, a clock set by hand).
    case clockStep(at: Double, step: Double, seconds: Double)
    /// The power fails at `at` while the venue is open; the node is back `seconds` later,
    /// restarted from its diary (a new boot: what it had not written is lost).
    case powerCut(at: Double, seconds: Double)
    /// The power fails at night at `at`; the node is back `seconds` later with its clock
    /// `clockBehind` seconds slow (the time saved before the cut) and not synchronised until
    /// `synchronisedAt`, before the next opening.
    case unsynchronisedStart(at: Double, seconds: Double, clockBehind: Double, synchronisedAt: Double)

    /// When it begins.
    public var at: Double {
        switch self {
        case .controllerLost(let at, _), .clockStep(let at, _, _), .powerCut(let at, _), .unsynchronisedStart(let at, _, _, _): at
        }
    }

    /// When it is over (the controller back, the clock back, the node running again, the clock
    /// synchronised).
    public var end: Double {
        switch self {
        case .controllerLost(let at, let seconds), .clockStep(let at, _, let seconds), .powerCut(let at, let seconds): at + seconds
        case .unsynchronisedStart(_, _, _, let synchronisedAt): synchronisedAt
        }
    }
}

/// Which fault when: pure, from a seed and the days' opening hours. Each open day has one fault
/// while open, in turn the controller lost, a clock step and a power cut (day 1, 2, 3, then
/// again); every third night (after day 1, 4, 7, …) the power fails and the node starts with an
/// unsynchronised clock. Times and lengths are drawn from the seed:
/// - the controller lost for 5–90 s, somewhere in the middle 70 % of the day's longest opening;
/// - the clock stepped forwards by 1–3 h (less when the opening would end before the clock is
///   back: the radio loop's opening hours follow the wall clock) for 5–30 min, in its first half;
/// - the power cut for 20–120 s (a Pi's boot), in the middle 70 %;
/// - the night's cut an hour or more after closing (the check-out limit passed), the node back
///   20–120 s later with its clock 5–60 min slow, synchronised 10 min to 2 h later and at least
///   30 min (and the lag) before the next opening.
public struct FaultSchedule: Sendable, Equatable {
    public let faults: [Fault]

    public init(faults: [Fault]) {
        self.faults = faults.sorted { $0.at < $1.at }
    }

    public init(seed: UInt64, days: DaySchedule) {
        var faults: [Fault] = []
        for day in days.days {
            var random = SimulationRandom(seed: seed, stream: 0xFA_0000 + UInt64(day.index))
            if let opening = day.openings.max(by: { $0.duration < $1.duration }), opening.duration >= 20 * 60 {
                let middle = { (r: inout SimulationRandom) in r.uniform(opening.open + 0.15 * opening.duration, opening.close - 0.15 * opening.duration) }
                switch day.index % 3 {
                case 0:
                    faults.append(.controllerLost(at: middle(&random), seconds: random.uniform(5, 90).rounded()))
                case 1:
                    let at = random.uniform(opening.open + 0.1 * opening.duration, opening.open + 0.5 * opening.duration).rounded()
                    let seconds = (random.uniform(5, 30) * 60).rounded()
                    let room = opening.close - 10 * 60 - at - seconds
                    let step = min(random.uniform(3600, 3 * 3600), room)
                    if step >= 5 * 60 { faults.append(.clockStep(at: at, step: (step / 60).rounded(.down) * 60, seconds: seconds)) }
                default:
                    faults.append(.powerCut(at: middle(&random), seconds: random.uniform(20, 120).rounded()))
                }
            }
            if day.index % 3 == 0, day.index + 1 < days.days.count, !day.openings.isEmpty,
                let next = days.days[day.index + 1].openings.first
            {
                let behind = (random.uniform(5, 60) * 60).rounded()
                let earliest = day.lastClosing + 3600
                let latest = next.open - 1800 - behind - 2 * 3600 - 120
                if latest > earliest {
                    let at = random.uniform(earliest, latest).rounded()
                    let seconds = random.uniform(20, 120).rounded()
                    let synchronisedAt = (at + seconds + random.uniform(600, 2 * 3600)).rounded()
                    faults.append(.unsynchronisedStart(at: at, seconds: seconds, clockBehind: behind, synchronisedAt: synchronisedAt))
                }
            }
        }
        self.init(faults: faults)
    }
}
