/// Targets by when they were last seen, as far as the table last looked: a min-heap of
/// (last seen, target). An entry is pushed when a target is added and looked at again only when
/// it is the oldest, so a sighting costs nothing here: the target's record says when it was
/// really last seen, and an entry older than that is pushed back with the record's time. Each
/// target comes back at most once per clean interval, and forgetting visits only the targets
/// that might be due instead of the whole table.
struct LastSeenQueue: Sendable {
    struct Entry: Sendable {
        var seen: Double
        var id: TargetID
    }

    private var heap: [Entry] = []

    var count: Int { heap.count }

    mutating func push(_ id: TargetID, seen: Double) {
        heap.append(Entry(seen: seen, id: id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].seen < heap[parent].seen else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Takes the oldest entry when `due` holds for its time. `due` must hold for every time
    /// before one it holds for (as "unseen for at least the interval" does).
    mutating func pop(where due: (Double) -> Bool) -> Entry? {
        guard let first = heap.first, due(first.seen) else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].seen < heap[smallest].seen { smallest = left }
            if right < heap.count, heap[right].seen < heap[smallest].seen { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
