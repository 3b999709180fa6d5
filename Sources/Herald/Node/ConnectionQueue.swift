/// The targets the last tick ranked for a connection, in two lanes taken in turn: urgent first
/// reads (``ConnectionCandidate/Reason/firstRead``), and all the others by reason and waiting
/// time. Taking turns keeps both moving when the controller cannot keep up: rotated iPhones are
/// read before the diary closes their visits, and phones waiting longer are still read at all.
struct ConnectionQueue: Sendable {
    private var urgent: [TargetID] = []
    private var waiting: [TargetID] = []
    private var nextUrgent = 0
    private var nextWaiting = 0
    private var urgentsTurn = true

    /// Replaces the ranking with `candidates`, which must be sorted.
    mutating func rank(_ candidates: [ConnectionCandidate]) {
        urgent.removeAll(keepingCapacity: true)
        waiting.removeAll(keepingCapacity: true)
        for candidate in candidates {
            if candidate.reason == .firstRead { urgent.append(candidate.id) } else { waiting.append(candidate.id) }
        }
        nextUrgent = 0
        nextWaiting = 0
        urgentsTurn = true
    }

    mutating func removeAll() { rank([]) }

    var isEmpty: Bool { nextUrgent == urgent.count && nextWaiting == waiting.count }

    /// The next target, taking the lanes in turn while both hold some.
    mutating func next() -> TargetID? {
        let fromUrgent = nextUrgent < urgent.count && (urgentsTurn || nextWaiting == waiting.count)
        if fromUrgent {
            nextUrgent += 1
            urgentsTurn = false
            return urgent[nextUrgent - 1]
        }
        guard nextWaiting < waiting.count else { return nil }
        nextWaiting += 1
        urgentsTurn = true
        return waiting[nextWaiting - 1]
    }
}
