import BLEHost
import Synchronization
import VenueNode

/// Everything the node's loop handles, from three sources: the host's events (forwarded), the
/// clock tick, and the results of the requests the loop started. One consumer takes it all in
/// batches, so the node policy has one owner and no locks.
///
/// Advertising reports are bounded: when the loop falls `reportCapacity` behind, the oldest half
/// is dropped and counted (the newest sightings matter most). Everything else (ticks, request
/// results, connections, writes) is few and never dropped: a lost result would leave a session
/// waiting for its timeout.
final class NodeInbox: Sendable {
    static let reportCapacity = 4096

    private struct State: Sendable {
        var items: [NodeLoop.Input] = []
        var reports = 0
        var dropped = 0
        var finished = false
        var waiter: CheckedContinuation<[NodeLoop.Input]?, Never>?
    }

    private let state = Mutex(State())

    /// Advertising reports dropped so far.
    var dropped: Int { state.withLock { $0.dropped } }

    func push(_ input: NodeLoop.Input) {
        let resume = state.withLock { s -> (CheckedContinuation<[NodeLoop.Input]?, Never>, [NodeLoop.Input])? in
            guard !s.finished else { return nil }
            if case .host(.advertisingReport) = input {
                if s.reports >= Self.reportCapacity { Self.dropOldestReports(&s) }
                s.reports += 1
            }
            s.items.append(input)
            guard let waiter = s.waiter else { return nil }
            s.waiter = nil
            return (waiter, Self.take(&s))
        }
        if let (waiter, items) = resume { waiter.resume(returning: items) }
    }

    /// Ends the sequence: ``next()`` returns what is left, then nil.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<[NodeLoop.Input]?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next batch, oldest first; nil once finished and empty. One caller at a time.
    func next() async -> [NodeLoop.Input]? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> [NodeLoop.Input]?? in
                if !s.items.isEmpty { return .some(Self.take(&s)) }
                if s.finished { return .some(nil) }
                s.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private static func take(_ s: inout State) -> [NodeLoop.Input] {
        s.reports = 0
        defer { s.items = [] }
        return s.items
    }

    private static func dropOldestReports(_ s: inout State) {
        var toDrop = s.reports / 2
        s.items.removeAll { item in
            guard toDrop > 0, case .host(.advertisingReport) = item else { return false }
            toDrop -= 1
            return true
        }
        let dropped = s.reports / 2
        s.reports -= dropped
        s.dropped += dropped
    }
}
