/// The data path of every open link: ACL reassembly, the fixed L2CAP channels (ATT to the link's
/// ``GATTConnection``, signalling and SMP to their responders), fragmentation and ACL flow control
/// on the way out. Pure: the host engine feeds it and carries out its ``Output``s.
public struct LinkDataPath: Sendable {
    public enum Output: Sendable {
        /// An ACL packet the controller has a buffer for.
        case send(H4Packet)
        /// Disconnect the link (its ATT bearer is dead).
        case disconnect(link: UInt16)
        /// Apply parameters the peer asked for (accepted on the signalling channel, as central).
        case updateConnection(link: UInt16, LEConnectionParameters)
        case event(HostEvent)
        /// The peer did something useful on `link`: a write the validator accepted, a read of
        /// an application characteristic, an answer to a procedure of ours (see
        /// ``InboundLinkGuard``).
        case useful(link: UInt16)
        /// A GATT client procedure on `link` ended.
        case procedureFinished(link: UInt16, GATTProcedureID, Result<GATTClientResult, GATTClientError>)
    }

    /// Counts of input dropped rather than trusted.
    public struct Counters: Hashable, Sendable {
        /// ACL packets with a bad header or length.
        public var malformedACL = 0
        /// ACL data for a handle with no open link.
        public var unknownHandle = 0
        /// L2CAP frames on channels other than ATT, signalling and SMP.
        public var unknownChannel = 0
    }

    struct Link: Sendable {
        var info: HostLink
        var gatt: GATTConnection
        /// Set once a disconnect was asked for: no new procedures or values go out on it.
        var closing = false
    }

    /// The controller's ACL data length (LE Read Buffer Size): the most bytes per ACL packet.
    public let aclDataLength: Int
    /// How long each GATT client request of ours waits for the peer before the link is closed.
    public let requestTimeout: Duration
    public private(set) var counters = Counters()
    private(set) var flow: ACLFlowControl
    private var reassembler = ACLReassembler(maximumPayloadLength: 1024)
    private var links: [UInt16: Link] = [:]

    public init(aclDataLength: Int, aclBufferCount: Int, requestTimeout: Duration = ATTBearer.transactionTimeout) {
        self.aclDataLength = max(27, aclDataLength)
        self.requestTimeout = requestTimeout
        self.flow = ACLFlowControl(bufferCount: aclBufferCount)
    }

    public var openLinks: [HostLink] { links.values.map(\.info).sorted { $0.handle < $1.handle } }
    public var linkCount: Int { links.count }
    public func link(_ handle: UInt16) -> HostLink? { links[handle]?.info }
    public var reassemblyCounters: ACLReassembler.Counters { reassembler.counters }
    /// ATT drop counters of one link.
    public func attCounters(link handle: UInt16) -> ATTBearer.Counters? { links[handle]?.gatt.bearer.counters }

    /// When ``tick(now:)`` must next run (ATT transaction timeouts).
    public var nextDeadline: ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        for index in links.values.indices { earliest.lower(to: links.values[index].gatt.nextDeadline) }
        return earliest
    }

    /// LE Connection Complete with success: the link exists from now on.
    public mutating func opened(_ link: HostLink) {
        links[link.handle] = Link(info: link, gatt: GATTConnection(link: link.handle, requestTimeout: requestTimeout))
        reassembler.removeLink(link.handle)
    }

    /// Disconnection Complete: running procedures fail, the link's buffers are free again.
    public mutating func closed(handle: UInt16, now: ContinuousClock.Instant) -> [Output] {
        reassembler.removeLink(handle)
        var outputs = flow.disconnected(handle: handle).map { Output.send(Self.packet($0)) }
        guard var link = links.removeValue(forKey: handle) else { return outputs }
        for action in link.gatt.close(now: now) {
            if case .procedureFinished(let id, let result) = action {
                outputs.append(.procedureFinished(link: handle, id, result))
            }
        }
        return outputs
    }

    /// The controller was reset: every link is gone without a Disconnection Complete.
    public mutating func removeAll(now: ContinuousClock.Instant) -> [Output] {
        var outputs: [Output] = []
        for handle in links.keys.sorted() {
            let link = links[handle]
            outputs += closed(handle: handle, now: now).filter { if case .send = $0 { false } else { true } }
            if let link { outputs.append(.event(.disconnected(link.info, reason: .unspecifiedError))) }
        }
        flow.reset()
        reassembler.removeAll()
        return outputs
    }

    /// Number Of Completed Packets for one handle.
    public mutating func completed(_ count: Int, handle: UInt16) -> [Output] {
        flow.completed(count, handle: handle).map { .send(Self.packet($0)) }
    }

    /// An ACL packet from the controller (the H4 body, after the type byte).
    public mutating func receive(
        acl body: [UInt8], database: GATTDatabase, validateWrite: TimedGATTWriteValidator, now: ContinuousClock.Instant
    ) -> [Output] {
        let packet: ACLPacket
        do {
            packet = try ACLPacket(decoding: body)
        } catch {
            counters.malformedACL += 1
            return []
        }
        guard links[packet.header.handle] != nil else {
            counters.unknownHandle += 1
            return []
        }
        guard case .frame(let frame) = reassembler.receive(packet) else { return [] }
        return route(frame, database: database, validateWrite: validateWrite, now: now)
    }

    private mutating func route(
        _ frame: L2CAPFrame, database: GATTDatabase, validateWrite: TimedGATTWriteValidator, now: ContinuousClock.Instant
    ) -> [Output] {
        guard var link = links[frame.handle] else { return [] }
        switch frame.channel {
        case .att:
            let actions = link.gatt.receive(frame.payload, database: database, now: now, validateWrite: { validateWrite(&$0, now) })
            links[frame.handle] = link
            return carryOut(actions, link: frame.handle)
        case .leSignalling:
            let response = L2CAPSignallingResponder.respond(to: frame.payload, role: link.info.role)
            var outputs = response.reply.map { send($0, on: .leSignalling, link: frame.handle) } ?? []
            if let parameters = response.connectionUpdate {
                outputs.append(.updateConnection(link: frame.handle, parameters))
            }
            return outputs
        case .smp:
            return SMPResponder.respond(to: frame.payload).map { send($0, on: .smp, link: frame.handle) } ?? []
        default:
            counters.unknownChannel += 1
            return []
        }
    }

    /// Starts a GATT client procedure on a link.
    public mutating func start(
        _ procedure: GATTClientProcedure, link handle: UInt16, now: ContinuousClock.Instant
    ) -> (GATTProcedureID, [Output])? {
        guard var link = links[handle], !link.closing else { return nil }
        let (id, actions) = link.gatt.start(procedure, now: now)
        links[handle] = link
        return (id, carryOut(actions, link: handle))
    }

    public mutating func writeWithoutResponse(
        _ value: [UInt8], to valueHandle: UInt16, link handle: UInt16
    ) throws(HostError) -> [Output] {
        guard let link = links[handle], !link.closing else { throw .noSuchLink(handle) }
        do {
            return carryOut(try link.gatt.writeWithoutResponse(value, to: valueHandle), link: handle)
        } catch {
            throw .gatt(error)
        }
    }

    /// A dynamic value of our database changed: notify or indicate subscribed links.
    public mutating func valueChanged(
        _ characteristic: GATTCharacteristic, value: [UInt8], now: ContinuousClock.Instant
    ) -> [Output] {
        var outputs: [Output] = []
        for handle in links.keys.sorted() {
            guard var link = links[handle], !link.closing else { continue }
            let actions = link.gatt.valueChanged(characteristic, value: value, now: now)
            links[handle] = link
            outputs += carryOut(actions, link: handle)
        }
        return outputs
    }

    /// Stops sending on a link that is being disconnected; true the first time.
    public mutating func markClosing(link handle: UInt16) -> Bool {
        guard var link = links[handle], !link.closing else { return false }
        link.closing = true
        links[handle] = link
        return true
    }

    /// Fires ATT timeouts.
    public mutating func tick(now: ContinuousClock.Instant) -> [Output] {
        var outputs: [Output] = []
        for handle in links.keys.sorted() {
            guard var link = links[handle], let deadline = link.gatt.nextDeadline, deadline <= now else { continue }
            let actions = link.gatt.tick(now: now)
            links[handle] = link
            outputs += carryOut(actions, link: handle)
        }
        return outputs
    }

    private mutating func carryOut(_ actions: [GATTConnection.Action], link handle: UInt16) -> [Output] {
        var outputs: [Output] = []
        for action in actions {
            switch action {
            case .send(let pdu):
                outputs += send(pdu, on: .att, link: handle)
            case .disconnect:
                if markClosing(link: handle) { outputs.append(.disconnect(link: handle)) }
            case .write(let write):
                outputs.append(.useful(link: handle))
                outputs.append(.event(.gattWrite(withWriter(write, link: handle))))
            case .writeRefused(let write, let error):
                // Not useful: a refused write does not keep the link from its idle limit.
                outputs.append(.event(.gattWriteRefused(withWriter(write, link: handle), error)))
            case .valueRead:
                outputs.append(.useful(link: handle))
            case .subscriptionChanged(let subscription):
                outputs.append(.event(.subscriptionChanged(subscription)))
            case .notification(let valueHandle, let value), .indication(let valueHandle, let value):
                outputs.append(.event(.notification(link: handle, handle: valueHandle, value: value)))
            case .procedureFinished(let id, let result):
                if case .success = result { outputs.append(.useful(link: handle)) }
                outputs.append(.procedureFinished(link: handle, id, result))
            }
        }
        return outputs
    }

    /// The write with its writer's address, which the application acts on.
    private func withWriter(_ write: GATTWrite, link handle: UInt16) -> GATTWrite {
        var write = write
        if let info = links[handle]?.info {
            write.peerAddress = info.peerAddress
            write.peerAddressType = info.peerAddressType
        }
        return write
    }

    /// One L2CAP frame out: fragmented to the controller's data length, through flow control.
    private mutating func send(_ payload: [UInt8], on channel: L2CAPChannelID, link handle: UInt16) -> [Output] {
        let packets = ACLFragmenter.fragment(handle: handle, channel: channel, payload: payload, maximumDataLength: aclDataLength)
        return flow.enqueue(packets, handle: handle).map { .send(Self.packet($0)) }
    }

    /// ACL packets come from ``ACLFragmenter`` with the H4 byte in front.
    private static func packet(_ bytes: [UInt8]) -> H4Packet {
        H4Packet(type: .acl, body: Array(bytes.dropFirst()))
    }
}
