/// A recorded visit reduced to what judging needs, in virtual seconds.
public struct RecordedVisit: Sendable, Equatable {
    public var payload: [UInt8]
    public var checkIn: Double
    /// The check-out, or the last sighting of a visit still open.
    public var checkOut: Double

    public init(payload: [UInt8], checkIn: Double, checkOut: Double) {
        self.payload = payload
        self.checkIn = checkIn
        self.checkOut = checkOut
    }
}

/// Matches recorded visits of one payload kind to true visits of the same identity.
///
/// Each recorded visit goes to the true visit of its payload that it overlaps most (ties: the
/// earlier). One that overlaps none is a **phantom**; one that overlaps several true visits is
/// **merged** (it is counted for the one it overlaps most). A true visit longer than the check-in
/// limit is **eligible**: **recalled** when at least one recorded visit went to it, **split** when
/// several did. A true visit not longer than the limit (a walk-past) that got a recorded visit is
/// a **walk-past recorded**. A longer one that no node could record (`hidden`: a phone that
/// made itself known for no longer than the limit, see ``WriterVisibility``) and that was not
/// recorded is **hidden**, neither eligible nor a walk-past; recorded all the same, it counts
/// as eligible and recalled. Check-in error is the earliest fragment's check-in minus the
/// arrival, check-out error the latest fragment's check-out minus the departure.
struct VisitMatching {
    let truth: [TrueVisit]
    /// By index into `truth`: no node could have recorded it.
    let hidden: [Bool]
    /// Recorded visits per true visit, by index into `truth`.
    private(set) var fragments: [[RecordedVisit]]
    private(set) var recorded = 0
    private(set) var phantom = 0
    private(set) var merged = 0

    init(truth: [TrueVisit], recorded visits: [RecordedVisit], hidden: [Bool]? = nil) {
        self.truth = truth
        self.hidden = hidden ?? Array(repeating: false, count: truth.count)
        precondition(self.hidden.count == truth.count)
        fragments = Array(repeating: [], count: truth.count)
        var byIdentity: [[UInt8]: [Int]] = [:]
        for (i, visit) in truth.enumerated() {
            byIdentity[visit.payload, default: []].append(i)
        }
        for visit in visits {
            recorded += 1
            var best: Int? = nil
            var bestOverlap = -Double.infinity
            var overlapping = 0
            for i in byIdentity[visit.payload] ?? [] {
                let overlap = min(visit.checkOut, truth[i].leave) - max(visit.checkIn, truth[i].arrive)
                guard overlap >= 0 else { continue }
                overlapping += 1
                if overlap > bestOverlap {
                    best = i
                    bestOverlap = overlap
                }
            }
            if let best {
                fragments[best].append(visit)
                if overlapping > 1 { merged += 1 }
            } else {
                phantom += 1
            }
        }
    }

    func isEligible(_ i: Int, checkIn: Double) -> Bool { truth[i].duration > checkIn }

    struct Tally {
        var trueVisits = 0
        var eligible = 0
        var recalled = 0
        var split = 0
        var walkPasts = 0
        var walkPastsRecorded = 0
        var hidden = 0
        var checkInErrors: [Double] = []
        var checkOutErrors: [Double] = []
    }

    /// Counts over the true visits that `include` selects.
    func tally(checkIn: Double, including include: (TrueVisit) -> Bool = { _ in true }) -> Tally {
        var t = Tally()
        for (i, visit) in truth.enumerated() where include(visit) {
            t.trueVisits += 1
            let parts = fragments[i]
            guard isEligible(i, checkIn: checkIn) else {
                t.walkPasts += 1
                if !parts.isEmpty { t.walkPastsRecorded += 1 }
                continue
            }
            if hidden[i], parts.isEmpty {
                t.hidden += 1
                continue
            }
            t.eligible += 1
            guard let firstIn = parts.map(\.checkIn).min(), let lastOut = parts.map(\.checkOut).max() else { continue }
            t.recalled += 1
            if parts.count > 1 { t.split += 1 }
            t.checkInErrors.append(firstIn - visit.arrive)
            t.checkOutErrors.append(lastOut - visit.leave)
        }
        return t
    }
}
