import Testing
@testable import BLEHost

@Suite struct ACLFlowControlTests {
    static func packets(_ tag: UInt8, _ n: Int) -> [[UInt8]] { (0..<n).map { [0x02, tag, UInt8($0)] } }

    @Test func neverMoreInFlightThanBuffers() {
        var fc = ACLFlowControl(bufferCount: 1)
        #expect(fc.enqueue(Self.packets(1, 3), handle: 1) == [[0x02, 1, 0]])
        #expect(fc.packetsInFlight == 1)
        #expect(fc.packetsQueued == 2)
        #expect(fc.enqueue(Self.packets(2, 1), handle: 2) == [])
        // Each credit releases exactly one packet, links taking turns.
        #expect(fc.completed(1, handle: 1) == [[0x02, 2, 0]])
        #expect(fc.completed(1, handle: 2) == [[0x02, 1, 1]])
        #expect(fc.completed(1, handle: 1) == [[0x02, 1, 2]])
        #expect(fc.completed(1, handle: 1) == [])
        #expect(fc.packetsInFlight == 0)
        #expect(fc.packetsQueued == 0)
    }

    @Test func severalBuffersFillAtOnceAndCreditsCountPerHandle() {
        var fc = ACLFlowControl(bufferCount: 3)
        #expect(fc.enqueue(Self.packets(1, 5), handle: 1).count == 3)
        #expect(fc.completed(2, handle: 1) == [[0x02, 1, 3], [0x02, 1, 4]])
        #expect(fc.packetsInFlight(handle: 1) == 3)
        // A completion for another handle (or more than were sent) gives no credit.
        #expect(fc.completed(1, handle: 9) == [])
        #expect(fc.completed(5, handle: 1) == [])
        #expect(fc.unexpectedCompletions == 3)
        #expect(fc.packetsInFlight == 0)
    }

    @Test func disconnectionFreesBuffersAndDropsTheQueue() {
        var fc = ACLFlowControl(bufferCount: 1)
        _ = fc.enqueue(Self.packets(1, 4), handle: 1)
        _ = fc.enqueue(Self.packets(2, 2), handle: 2)
        #expect(fc.disconnected(handle: 1) == [[0x02, 2, 0]])
        #expect(fc.packetsQueued == 1)
        #expect(fc.packetsInFlight(handle: 1) == 0)
        // A late completion for the gone link is ignored.
        #expect(fc.completed(1, handle: 1) == [])
        #expect(fc.completed(1, handle: 2) == [[0x02, 2, 1]])
        fc.reset()
        #expect(fc.packetsInFlight == 0 && fc.packetsQueued == 0)
        #expect(fc.enqueue(Self.packets(3, 1), handle: 3) == [[0x02, 3, 0]])
    }

    @Test func turnsStayFairWhenALinkLeavesMidRound() {
        var fc = ACLFlowControl(bufferCount: 1)
        _ = fc.enqueue(Self.packets(1, 2), handle: 1)  // 1.0 in flight
        _ = fc.enqueue(Self.packets(2, 2), handle: 2)
        _ = fc.enqueue(Self.packets(3, 2), handle: 3)
        #expect(fc.completed(1, handle: 1) == [[0x02, 2, 0]])  // round robin: link 2's turn
        // Link 2 leaves with a packet in flight: its buffer is free, and link 3 is next.
        #expect(fc.disconnected(handle: 2) == [[0x02, 3, 0]])
        #expect(fc.completed(1, handle: 3) == [[0x02, 1, 1]])
        #expect(fc.completed(1, handle: 1) == [[0x02, 3, 1]])
        #expect(fc.completed(1, handle: 3) == [])
        #expect(fc.packetsInFlight == 0 && fc.packetsQueued == 0)
    }
}
