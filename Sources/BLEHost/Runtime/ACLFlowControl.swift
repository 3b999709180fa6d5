/// Host-to-controller ACL flow control: never more ACL packets in the controller than it has
/// buffers (LE Read Buffer Size, or Read Buffer Size when that says 0). Credits come back through
/// Number Of Completed Packets; a link that disconnects gives back the buffers its packets held
/// (the controller frees them without reporting) and loses what was still queued.
///
/// Pure: packets go in per connection handle, and every method returns the packets that may be
/// sent now, in order. Links take turns, one packet each, so a long write on one link cannot starve
/// the others. btvirt offers a single buffer: a good test that nothing is sent early.
public struct ACLFlowControl: Sendable {
    /// Controller buffers (packets the controller can hold at once).
    public let bufferCount: Int
    private var inFlight: [UInt16: Int] = [:]
    /// Packets waiting per handle; a handle is in `order` exactly when its queue is not empty.
    private var queues: [UInt16: [[UInt8]]] = [:]
    /// Handles with queued packets, in the order they take turns; `turn` indexes the next one.
    private var order: [UInt16] = []
    private var turn = 0
    /// Packets sent and not yet completed, over all links.
    public private(set) var packetsInFlight = 0
    /// Credits the controller returned for packets we did not have in flight (a controller bug or
    /// a stale event after a disconnection); ignored and counted.
    public private(set) var unexpectedCompletions = 0

    public init(bufferCount: Int) {
        self.bufferCount = max(1, bufferCount)
    }

    /// Packets waiting for a buffer, over all links.
    public var packetsQueued: Int { queues.values.reduce(0) { $0 + $1.count } }

    /// Packets of `handle` in the controller and not yet completed.
    public func packetsInFlight(handle: UInt16) -> Int { inFlight[handle] ?? 0 }

    /// Queues the ACL packets of one link (already fragmented to the buffer length, H4 byte
    /// included) and returns those that may go now.
    public mutating func enqueue(_ packets: [[UInt8]], handle: UInt16) -> [[UInt8]] {
        guard !packets.isEmpty else { return [] }
        if queues[handle] == nil { order.append(handle) }
        queues[handle, default: []].append(contentsOf: packets)
        return drain()
    }

    /// Number Of Completed Packets for one handle.
    public mutating func completed(_ count: Int, handle: UInt16) -> [[UInt8]] {
        let held = inFlight[handle] ?? 0
        let credited = min(max(count, 0), held)
        unexpectedCompletions += max(count, 0) - credited
        inFlight[handle] = held == credited ? nil : held - credited
        packetsInFlight -= credited
        return drain()
    }

    /// Disconnection Complete: the link's buffers are free again, its queue is dropped.
    public mutating func disconnected(handle: UInt16) -> [[UInt8]] {
        packetsInFlight -= inFlight.removeValue(forKey: handle) ?? 0
        queues[handle] = nil
        if let index = order.firstIndex(of: handle) {
            order.remove(at: index)
            if index < turn { turn -= 1 }
        }
        return drain()
    }

    /// The controller was reset: nothing is in flight and nothing is queued.
    public mutating func reset() {
        self = ACLFlowControl(bufferCount: bufferCount)
    }

    private mutating func drain() -> [[UInt8]] {
        var out: [[UInt8]] = []
        while packetsInFlight < bufferCount && !order.isEmpty {
            if turn >= order.count { turn = 0 }
            let handle = order[turn]
            var queue = queues[handle] ?? []
            guard !queue.isEmpty else {
                order.remove(at: turn)  // unreachable by the invariant; keeps the loop finite anyway
                continue
            }
            out.append(queue.removeFirst())
            inFlight[handle, default: 0] += 1
            packetsInFlight += 1
            if queue.isEmpty {
                queues[handle] = nil
                order.remove(at: turn)  // `turn` now points at the next handle
            } else {
                queues[handle] = queue
                turn += 1
            }
        }
        return out
    }
}
