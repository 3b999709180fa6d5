import Synchronization

/// The host runtime's output to the layers above, in order, to one consumer.
///
/// Only events the producer marks **droppable** (for the host: advertising reports) are ever
/// dropped: when `capacity` of them wait, the oldest half of them goes (for a presence system
/// the newest sighting matters most) and is counted per kind, so a loss is visible rather than
/// silent. Every other event (state changes, connections and disconnections, GATT writes,
/// notifications) is always delivered, in order with the rest: losing a disconnection or a
/// write would leave the consumer's view of a link wrong for good. Those events are few and
/// bounded by the links and their ATT traffic, not by the air.
public final class EventQueue<Event: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Event

    private struct State: Sendable {
        var items: [Event] = []
        /// Droppable events among `items`.
        var droppable = 0
        var dropped: [String: Int] = [:]
        var finished = false
        var waiter: CheckedContinuation<[Event]?, Never>?
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let kind: @Sendable (Event) -> String
    private let isDroppable: @Sendable (Event) -> Bool

    /// `kind` names an event for the drop counts (e.g. "advertising report", "GATT write");
    /// `droppable` says which events may be dropped when `capacity` of them wait (by default
    /// every event may).
    public init(
        capacity: Int, kind: @escaping @Sendable (Event) -> String, droppable: @escaping @Sendable (Event) -> Bool = { _ in true }
    ) {
        self.capacity = Swift.max(1, capacity)
        self.kind = kind
        self.isDroppable = droppable
    }

    /// Hands an event to the consumer without waiting. After ``finish()`` the event is counted
    /// as dropped.
    public func push(_ event: Event) {
        let droppable = isDroppable(event)
        let resume = state.withLock { s -> (CheckedContinuation<[Event]?, Never>, [Event])? in
            guard !s.finished else {
                s.dropped[kind(event), default: 0] += 1
                return nil
            }
            if droppable {
                if s.droppable >= capacity { dropOldestHalf(&s) }
                s.droppable += 1
            }
            s.items.append(event)
            guard let waiter = s.waiter else { return nil }
            s.waiter = nil
            return (waiter, Self.take(&s))
        }
        if let (waiter, items) = resume { waiter.resume(returning: items) }
    }

    /// Ends the sequence after the events already queued.
    public func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<[Event]?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Events dropped so far, by kind.
    public var droppedCounts: [String: Int] { state.withLock { $0.dropped } }

    public func makeAsyncIterator() -> Iterator { Iterator(queue: self) }

    /// Takes the queued events in batches; ends when the queue is finished and empty, or when
    /// the consuming task is cancelled.
    public struct Iterator: AsyncIteratorProtocol {
        let queue: EventQueue
        private var batch: [Event] = []
        private var index = 0

        init(queue: EventQueue) { self.queue = queue }

        public mutating func next() async -> Event? {
            if index == batch.count {
                guard let next = await queue.nextBatch() else { return nil }
                batch = next
                index = 0
            }
            defer { index += 1 }
            return batch[index]
        }
    }

    /// Everything queued, oldest first; nil once finished and empty, or on cancellation.
    private func nextBatch() async -> [Event]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Event]?, Never>) in
                let ready = state.withLock { s -> [Event]?? in
                    if !s.items.isEmpty { return .some(Self.take(&s)) }
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<[Event]?, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private static func take(_ s: inout State) -> [Event] {
        s.droppable = 0
        defer { s.items = [] }
        return s.items
    }

    /// Drops the oldest half of the droppable events waiting, keeping everything else in order.
    private func dropOldestHalf(_ s: inout State) {
        var toDrop = Swift.max(1, s.droppable / 2)
        let dropping = toDrop
        var dropped = s.dropped
        s.items.removeAll { event in
            guard toDrop > 0, isDroppable(event) else { return false }
            toDrop -= 1
            dropped[kind(event), default: 0] += 1
            return true
        }
        s.dropped = dropped
        s.droppable -= dropping
    }
}
