import Testing
@testable import BLETransport

@Suite struct EventQueueTests {
    @Test func keepsTheNewestAndCountsDropsByKind() async {
        let queue = EventQueue<Int>(capacity: 3) { $0 % 2 == 0 ? "even" : "odd" }
        for n in 1...6 { queue.push(n) }
        queue.finish()
        var got: [Int] = []
        for await n in queue { got.append(n) }
        #expect(got == [4, 5, 6])
        #expect(queue.droppedCounts == ["odd": 2, "even": 1])
        queue.push(7)
        #expect(queue.droppedCounts["odd"] == 3)
    }
}
