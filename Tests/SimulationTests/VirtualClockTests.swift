import Testing

@testable import Simulation

@Suite struct VirtualClockTests {
    @Test func timeOnlyMovesForward() {
        var clock = VirtualClock(origin: 1000)
        clock.advance(to: 30)
        clock.advance(to: 10)
        #expect(clock.now == 30)
        #expect(clock.unixTime == 1030)
        #expect(clock.virtualTime(ofUnix: 1045) == 45)
    }

    @Test func pacingParsesTheSpeedOption() {
        #expect(Pacing("max") == .unpaced)
        #expect(Pacing("60") == .speedUp(60))
        #expect(Pacing("0.5") == .speedUp(0.5))
        #expect(Pacing("0") == nil)
        #expect(Pacing("-2") == nil)
        #expect(Pacing("fast") == nil)
        #expect(Pacing("inf") == nil)
        // Outside 0.01 to a million: refused (1e-10 used to overflow the pacer's instant).
        #expect(Pacing("1e-10") == nil)
        #expect(Pacing("0.009") == nil)
        #expect(Pacing("0.01") == .speedUp(0.01))
        #expect(Pacing("1000000") == .speedUp(1_000_000))
        #expect(Pacing("1000001") == nil)
    }

    @Test func theSlowestSpeedAtTheLongestRunHasADeadline() {
        let start = ContinuousClock.now
        let pacer = Pacer(pacing: .speedUp(0.01), startVirtual: 0, startWall: start)
        // A day of virtual time at the slowest speed: 100 days of wall time, no overflow.
        #expect(pacer.deadline(forVirtual: 86_400) == start + .seconds(8_640_000))
        #expect(pacer.deadline(forVirtual: 1e300) != nil)
    }

    @Test func aSpeedUpMapsVirtualTimeToWallTime() {
        let start = ContinuousClock.now
        let pacer = Pacer(pacing: .speedUp(60), startVirtual: 100, startWall: start)
        #expect(pacer.deadline(forVirtual: 220) == start + .seconds(2))
        #expect(pacer.delay(untilVirtual: 220, wallNow: start + .milliseconds(500)) == .milliseconds(1500))
        // Behind schedule: no wait.
        #expect(pacer.delay(untilVirtual: 220, wallNow: start + .seconds(3)) == .zero)
        // Before the start: due at once.
        #expect(pacer.deadline(forVirtual: 50) == start)
    }

    @Test func unpacedNeverWaits() {
        let start = ContinuousClock.now
        let pacer = Pacer(pacing: .unpaced, startVirtual: 0, startWall: start)
        #expect(pacer.deadline(forVirtual: 1e6) == nil)
        #expect(pacer.delay(untilVirtual: 1e6, wallNow: start) == .zero)
    }

    @Test func eventQueuePopsInTimeOrderAndTiesInSchedulingOrder() {
        var queue = TimedEventHeap<String>()
        queue.schedule("c", at: 3)
        queue.schedule("a1", at: 1)
        queue.schedule("b", at: 2)
        queue.schedule("a2", at: 1)
        queue.schedule("a3", at: 1)
        #expect(queue.nextTime == 1)
        #expect(queue.pop(notAfter: 0.5) == nil)
        var order: [String] = []
        while let (_, event) = queue.pop() { order.append(event) }
        #expect(order == ["a1", "a2", "a3", "b", "c"])
        #expect(queue.isEmpty)
    }

    @Test func eventQueueSortsManyEvents() {
        var queue = TimedEventHeap<Int>()
        var random = SimulationRandom(seed: 5)
        let times = (0..<1000).map { _ in random.uniform(0, 100) }
        for (i, t) in times.enumerated() { queue.schedule(i, at: t) }
        var popped: [Double] = []
        while let (t, _) = queue.pop() { popped.append(t) }
        #expect(popped == times.sorted())
    }
}
