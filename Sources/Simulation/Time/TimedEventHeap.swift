/// A min-heap of timed events: the scheduler of a discrete-event simulation.
///
/// Events at the same time come out in the order they were scheduled, so a run never depends on
/// how the heap happens to break ties.
public struct TimedEventHeap<Event>: Sendable where Event: Sendable {
    private struct Entry: Sendable {
        var time: Double
        var order: UInt64
        var event: Event

        func precedes(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && order < other.order)
        }
    }

    private var heap: [Entry] = []
    private var scheduled: UInt64 = 0

    public init() {}

    public var count: Int { heap.count }
    public var isEmpty: Bool { heap.isEmpty }

    /// The time of the earliest event.
    public var nextTime: Double? { heap.first?.time }

    public mutating func schedule(_ event: Event, at time: Double) {
        heap.append(Entry(time: time, order: scheduled, event: event))
        scheduled &+= 1
        siftUp(heap.count - 1)
    }

    /// Removes and returns the earliest event.
    public mutating func pop() -> (time: Double, event: Event)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let entry = heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
        return (entry.time, entry.event)
    }

    /// Removes and returns the earliest event if it is due at or before `time`.
    public mutating func pop(notAfter time: Double) -> (time: Double, event: Event)? {
        guard let first = heap.first, first.time <= time else { return nil }
        return pop()
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            let right = left + 1
            if right < heap.count, heap[right].precedes(heap[left]) { smallest = right }
            guard heap[smallest].precedes(heap[parent]) else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
