/// Rebuilds L2CAP frames from the ACL packets the controller delivers, per link.
///
/// Controller → host, a frame starts with PB 0b10 (0b00 is accepted too) and goes on with
/// 0b01 until the L2CAP length is reached. Anything inconsistent is dropped and counted, never
/// trusted: a continuation without a start, a new start while a frame is half built (the old
/// part is dropped, the new start is used), a frame longer than ``maximumPayloadLength``
/// (dropped with its continuations), fragments that overrun the announced length, and PB 0b11.
/// A frame that arrives in one packet is returned without copying.
public struct ACLReassembler: Sendable {
    public enum Outcome: Hashable, Sendable {
        /// A complete frame.
        case frame(L2CAPFrame)
        /// The packet was kept; more fragments are needed.
        case incomplete
        /// The packet (and any frame it belonged to) was dropped.
        case dropped(DropReason)
    }

    public enum DropReason: Hashable, Sendable {
        case continuationWithoutStart
        case frameTooLong(length: Int)
        case overrun
        case invalidBoundary(ACLPacketBoundary)
    }

    /// What was dropped since the reassembler was created.
    public struct Counters: Hashable, Sendable {
        public var continuationsWithoutStart = 0
        /// Half-built frames thrown away because a new frame started on the same link.
        public var interruptedFrames = 0
        public var framesTooLong = 0
        public var overruns = 0
        public var invalidBoundaries = 0
    }

    private enum Partial: Sendable {
        /// Bytes of the frame so far, L2CAP header included.
        case building([UInt8])
        /// Continuations of a dropped frame are dropped until the next start.
        case discarding
    }

    /// The largest L2CAP payload accepted (the header's length field).
    public let maximumPayloadLength: Int
    public private(set) var counters = Counters()
    private var partials: [UInt16: Partial] = [:]

    /// `maximumPayloadLength` must cover the largest PDU the host accepts on any fixed channel
    /// (ATT: the MTU it offers, up to 517).
    public init(maximumPayloadLength: Int = 1024) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// True if a frame is half built on this link.
    public func isBuilding(handle: UInt16) -> Bool {
        if case .building = partials[handle] { return true }
        return false
    }

    /// Feeds one ACL packet from the controller.
    public mutating func receive(_ packet: ACLPacket) -> Outcome {
        let handle = packet.header.handle
        switch packet.header.boundary {
        case .first, .firstNonFlushable:
            if case .building = partials.removeValue(forKey: handle) { counters.interruptedFrames += 1 }
            return start(handle: handle, data: packet.data)
        case .continuing:
            switch partials[handle] {
            case nil:
                counters.continuationsWithoutStart += 1
                return .dropped(.continuationWithoutStart)
            case .discarding:
                return .dropped(.continuationWithoutStart)
            case .building(var buffer):
                partials[handle] = .discarding  // released while appending, to avoid a copy
                buffer.append(contentsOf: packet.data)
                return progress(handle: handle, buffer: buffer)
            }
        default:
            counters.invalidBoundaries += 1
            partials[handle] = .discarding
            return .dropped(.invalidBoundary(packet.header.boundary))
        }
    }

    /// Forgets a link's half-built frame (call on Disconnection Complete).
    public mutating func removeLink(_ handle: UInt16) {
        partials.removeValue(forKey: handle)
    }

    /// Forgets everything (after a controller reset).
    public mutating func removeAll() { partials.removeAll() }

    private mutating func start(handle: UInt16, data: ArraySlice<UInt8>) -> Outcome {
        var r = ByteReader(data)
        guard let header = try? L2CAPHeader(from: &r) else {
            partials[handle] = .building(Array(data))
            return .incomplete
        }
        let length = Int(header.length)
        if length > maximumPayloadLength { return tooLong(handle: handle, length: length) }
        if r.remaining == length { return .frame(L2CAPFrame(handle: handle, channel: header.channel, payload: r.bytes)) }
        if r.remaining > length { return overrun(handle: handle) }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(L2CAPHeader.size + length)
        buffer.append(contentsOf: data)
        partials[handle] = .building(buffer)
        return .incomplete
    }

    private mutating func progress(handle: UInt16, buffer: [UInt8]) -> Outcome {
        var r = ByteReader(buffer)
        guard let header = try? L2CAPHeader(from: &r) else {
            partials[handle] = .building(buffer)
            return .incomplete
        }
        let length = Int(header.length)
        if length > maximumPayloadLength { return tooLong(handle: handle, length: length) }
        if r.remaining > length { return overrun(handle: handle) }
        if r.remaining < length {
            partials[handle] = .building(buffer)
            return .incomplete
        }
        partials.removeValue(forKey: handle)
        return .frame(L2CAPFrame(handle: handle, channel: header.channel, payload: r.bytes))
    }

    private mutating func tooLong(handle: UInt16, length: Int) -> Outcome {
        counters.framesTooLong += 1
        partials[handle] = .discarding
        return .dropped(.frameTooLong(length: length))
    }

    private mutating func overrun(handle: UInt16) -> Outcome {
        counters.overruns += 1
        partials[handle] = .discarding
        return .dropped(.overrun)
    }
}
