/// The targets the last tick ranked for a connection, taken in rank order: first reads before
/// re-reads and shares, each longest waiting first.
///
/// First reads go strictly by first sighting. In a crowd the node reads fewer phones a second
/// than arrive or rotate their address, and an unread address is lost when its phone rotates
/// it (about every 15 minutes): the address heard longest is the one closest to that, and its
/// measurements wait in the node (spread over the whole wait) so that a late read still gives
/// the diary the whole visit. Ranking fresh addresses ahead (an earlier design) left old ones to
/// rotate unread, and split their visits.
struct ConnectionQueue: Sendable {
    /// The tick's candidates as they are (in a crowd thousands: kept, not copied).
    private var ranking: [ConnectionCandidate] = []
    private var next = 0

    /// Replaces the ranking with `candidates`, which must be sorted.
    mutating func rank(_ candidates: [ConnectionCandidate]) {
        ranking = candidates
        next = 0
    }

    mutating func removeAll() { rank([]) }

    var isEmpty: Bool { next == ranking.count }

    /// The next target in rank order, nil when the ranking is used up.
    mutating func take() -> TargetID? {
        guard next < ranking.count else { return nil }
        next += 1
        return ranking[next - 1].id
    }
}
