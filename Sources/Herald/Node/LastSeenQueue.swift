/// Targets by when they were last seen, as far as the table last looked: (last seen, target)
/// entries taken oldest first. An entry is pushed when a target is added and looked at again only
/// when it is the oldest, so a sighting costs nothing here: the target's record says when it was
/// really last seen, and an entry older than that is pushed back with the record's time. Each
/// target comes back at most once per clean interval, and forgetting visits only the targets
/// that might be due instead of the whole table.
///
/// Entries arrive mostly in time order: a new target is pushed at the current time, the latest
/// yet. Those go to the end of a sorted run and leave from its front, each in constant time; the
/// others (pushed back with an older time) go into a min-heap. The oldest entry is the older of
/// the run's first and the heap's top. In an advert flood, where every advert adds a target and
/// makes room by forgetting the one heard least recently, this keeps both ends cheap.
struct LastSeenQueue: Sendable {
    struct Entry: Sendable {
        var seen: Double
        var id: TargetID
    }

    /// Entries in time order from `runStart` on (those before it have left).
    private var run: [Entry] = []
    private var runStart = 0
    private var heap: [Entry] = []

    var count: Int { run.count - runStart + heap.count }

    /// The oldest entry.
    var oldest: Entry? {
        takesFromRun ? run[runStart] : heap.first
    }

    /// Whether the oldest entry is the run's first (on a tie too).
    private var takesFromRun: Bool {
        runStart < run.count && (heap.isEmpty || run[runStart].seen <= heap[0].seen)
    }

    mutating func push(_ id: TargetID, seen: Double) {
        let entry = Entry(seen: seen, id: id)
        if runStart == run.count {
            run.removeAll(keepingCapacity: true)
            runStart = 0
            run.append(entry)
        } else if run[run.count - 1].seen <= seen {
            run.append(entry)
        } else {
            pushHeap(entry)
        }
    }

    /// Takes the oldest entry when `due` holds for its time. `due` must hold for every time
    /// before one it holds for (as "unseen for at least the interval" does).
    mutating func pop(where due: (Double) -> Bool) -> Entry? {
        if takesFromRun {
            let first = run[runStart]
            guard due(first.seen) else { return nil }
            runStart += 1
            // Drop what has left once it is most of the run (amortised constant time).
            if runStart >= 1024, runStart * 2 >= run.count {
                run.removeFirst(runStart)
                runStart = 0
            }
            return first
        }
        guard let first = heap.first, due(first.seen) else { return nil }
        let last = heap.removeLast()
        if heap.isEmpty { return first }
        // Floyd's pop: the hole at the root goes down to a leaf along the older children (one
        // comparison a level), then the last entry goes up from there (rarely far).
        var hole = 0
        while true {
            let left = 2 * hole + 1
            guard left < heap.count else { break }
            let right = left + 1
            let child = right < heap.count && heap[right].seen < heap[left].seen ? right : left
            heap[hole] = heap[child]
            hole = child
        }
        while hole > 0 {
            let parent = (hole - 1) / 2
            guard last.seen < heap[parent].seen else { break }
            heap[hole] = heap[parent]
            hole = parent
        }
        heap[hole] = last
        return first
    }

    private mutating func pushHeap(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].seen < heap[parent].seen else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }
}
