import Synchronization

/// The host runtime's output to the layers above: bounded, so a slow consumer cannot make the
/// runtime's memory grow, and counting what it drops (per kind), so a loss is visible rather than
/// silent. When full, the oldest event goes: for a presence system the newest sighting matters most.
/// One consumer iterates it.
public final class EventQueue<Event: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Event

    private let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let kind: @Sendable (Event) -> String
    private let dropped = Mutex<[String: Int]>([:])

    /// `kind` names an event for the drop counts (e.g. "advertising report", "GATT write").
    public init(capacity: Int, kind: @escaping @Sendable (Event) -> String) {
        (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(Swift.max(1, capacity)))
        self.kind = kind
    }

    /// Hands an event to the consumer without waiting; counts the event it displaces, if any.
    public func push(_ event: Event) {
        switch continuation.yield(event) {
        case .enqueued: break
        case .dropped(let old): count(old)
        case .terminated: count(event)
        @unknown default: count(event)
        }
    }

    /// Ends the sequence after the events already queued.
    public func finish() { continuation.finish() }

    /// Events dropped so far, by kind.
    public var droppedCounts: [String: Int] { dropped.withLock { $0 } }

    public func makeAsyncIterator() -> AsyncStream<Event>.Iterator { stream.makeAsyncIterator() }

    private func count(_ event: Event) {
        let name = kind(event)
        dropped.withLock { $0[name, default: 0] += 1 }
    }
}
