/// The targets the last tick ranked for a connection. First reads come before re-reads and
/// shares, in two lanes taken in turn: urgent ones (``ConnectionCandidate/Reason/firstRead``)
/// and those waiting longer. Taking turns keeps both moving when the controller cannot keep up:
/// rotated iPhones are read before the diary closes their visits, and phones waiting longer are
/// still read at all.
struct ConnectionQueue: Sendable {
    private var urgent = Lane()
    private var late = Lane()
    private var rest = Lane()
    private var urgentsTurn = true

    private struct Lane: Sendable {
        var ids: [TargetID] = []
        var next = 0
        var isEmpty: Bool { next == ids.count }

        mutating func take() -> TargetID? {
            guard next < ids.count else { return nil }
            next += 1
            return ids[next - 1]
        }
    }

    /// Replaces the ranking with `candidates`, which must be sorted.
    mutating func rank(_ candidates: [ConnectionCandidate]) {
        for k in [\Self.urgent, \.late, \.rest] as [WritableKeyPath<Self, Lane>] {
            self[keyPath: k].ids.removeAll(keepingCapacity: true)
            self[keyPath: k].next = 0
        }
        for candidate in candidates {
            switch candidate.reason {
            case .firstRead: urgent.ids.append(candidate.id)
            case .lateFirstRead: late.ids.append(candidate.id)
            case .reread, .share: rest.ids.append(candidate.id)
            }
        }
        urgentsTurn = true
    }

    mutating func removeAll() { rank([]) }

    var isEmpty: Bool { urgent.isEmpty && late.isEmpty && rest.isEmpty }

    /// The next target: first reads, urgent and late in turn while both lanes hold some, then
    /// the rest in rank order.
    mutating func next() -> TargetID? {
        if !urgent.isEmpty, urgentsTurn || late.isEmpty {
            urgentsTurn = false
            return urgent.take()
        }
        if let id = late.take() {
            urgentsTurn = true
            return id
        }
        return rest.take()
    }
}
