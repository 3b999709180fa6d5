/// A target the node would connect to, ranked: by reason, then longest waiting first.
struct ConnectionCandidate: Comparable, Sendable {
    /// Why, most urgent first.
    enum Reason: Int, Comparable, Sendable {
        /// Never read: a phone that arrived, or an iPhone's new address after a rotation. Its
        /// measurements are kept for when it is read (see ``ConnectionQueue``).
        case firstRead
        /// Read before; ``NodeConfiguration/payloadUpdateInterval`` has passed.
        case reread
        /// A payload-sharing write is due (``SensorNode/sharingDue(_:now:)``).
        case share

        static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    var reason: Reason
    /// Since when it has waited for this (first seen, last read, last shared).
    var since: Double
    var id: TargetID

    static func < (a: Self, b: Self) -> Bool {
        (a.reason, a.since, a.id.rawValue) < (b.reason, b.since, b.id.rawValue)
    }
}
