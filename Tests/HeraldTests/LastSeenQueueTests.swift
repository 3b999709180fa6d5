import Testing

@testable import Herald

@Suite struct LastSeenQueueTests {
    /// Entries pushed in time order (new targets) and out of it (pushed back with an older time)
    /// leave oldest first, each when due and not before.
    @Test(arguments: [UInt64(1), 2, 3])
    func entriesLeaveOldestFirstWhenDue(seed: UInt64) {
        var queue = LastSeenQueue()
        var model: [Double] = []
        var random = TestRandom(state: seed)
        var now = 0.0
        var nextID: UInt64 = 1
        for _ in 0..<5_000 {
            now += Double(random.below(10)) / 10
            if random.chance(60) {
                // Pushed now (a new target) or with an older time (pushed back).
                let seen = random.chance(70) ? now : now - Double(random.below(300)) / 10
                queue.push(TargetID(rawValue: nextID), seen: seen)
                nextID += 1
                model.append(seen)
            } else {
                let interval = Double(random.below(40))
                model.sort()
                let due = model.first.map { now - $0 >= interval } ?? false
                let popped = queue.pop(where: { now - $0 >= interval })
                #expect((popped != nil) == due)
                if let popped {
                    #expect(popped.seen == model.removeFirst())
                }
            }
            #expect(queue.count == model.count)
            #expect(queue.oldest?.seen == model.min())
        }
        model.sort()
        for seen in model { #expect(queue.pop(where: { _ in true })?.seen == seen) }
        #expect(queue.pop(where: { _ in true }) == nil && queue.count == 0)
    }
}
