/// Everything ATT and GATT for one link, the one value the runtime keeps per connection: the
/// ``ATTBearer``, this link's ``GATTServer`` state and the running ``GATTClientProcedure``s.
///
/// The runtime feeds it PDUs from L2CAP CID 4 (``receive(_:database:now:validateWrite:)``),
/// calls ``tick(now:)`` at ``nextDeadline``, and carries out the returned ``Action``s in order:
/// `send` on CID 4, `disconnect` the link, hand the rest to the application. Pure: no I/O, time
/// injected, the shared ``GATTDatabase`` passed in.
public struct GATTConnection: Sendable {
    public enum Action: Hashable, Sendable {
        /// Transmit this ATT PDU on L2CAP CID 4 of the link.
        case send([UInt8])
        /// An ATT transaction timed out: disconnect the link (the bearer is dead).
        case disconnect
        /// The peer wrote to one of our characteristics (already accepted by the validator).
        case write(GATTWrite)
        /// The validator refused the peer's write with this error (already answered).
        case writeRefused(GATTWrite, ATTErrorCode)
        /// The peer read the value of one of the application's characteristics (Read or Read
        /// Blob answered with the value; GAP and GATT service values do not count). Lets the
        /// runtime tell a peer that uses its link from one that only holds it.
        case valueRead(GATTCharacteristic)
        /// The peer changed a CCCD of ours.
        case subscriptionChanged(GATTSubscription)
        /// The peer's server notified or indicated a value (indications are confirmed already).
        case notification(handle: UInt16, value: [UInt8])
        case indication(handle: UInt16, value: [UInt8])
        /// A client procedure started with ``start(_:now:)`` ended.
        case procedureFinished(GATTProcedureID, Result<GATTClientResult, GATTClientError>)
    }

    /// The link (HCI connection handle).
    public let link: UInt16
    public private(set) var bearer: ATTBearer
    public private(set) var server: GATTServer
    private var procedures: [UInt64: GATTClientProcedure] = [:]
    private var nextProcedure: UInt64 = 1

    /// `requestTimeout`: how long each request of ours waits for the peer (see ``ATTBearer/requestTimeout``).
    public init(
        link: UInt16, server configuration: GATTServer.Configuration = .init(), requestTimeout: Duration = ATTBearer.transactionTimeout
    ) {
        self.link = link
        self.bearer = ATTBearer(requestTimeout: requestTimeout)
        self.server = GATTServer(link: link, configuration: configuration)
    }

    /// The ATT_MTU in force on this link.
    public var mtu: Int { bearer.mtu }
    /// When ``tick(now:)`` must next run.
    public var nextDeadline: ContinuousClock.Instant? { bearer.nextDeadline }

    /// One PDU received on L2CAP CID 4. Requests are answered at once (every request gets
    /// exactly one response); writes to application characteristics pass `validateWrite` first.
    public mutating func receive(
        _ pdu: ArraySlice<UInt8>, database: GATTDatabase, now: ContinuousClock.Instant,
        validateWrite: GATTWriteValidator = { _ in nil }
    ) -> [Action] {
        let events = bearer.receive(pdu, now: now)
        var actions: [Action] = []
        for event in events {
            handle(event, database: database, now: now, validateWrite: validateWrite, &actions)
        }
        return actions
    }

    /// Starts a client procedure; its requests queue behind any others on the bearer. It ends
    /// with ``Action/procedureFinished(_:_:)`` carrying the returned id.
    public mutating func start(_ procedure: GATTClientProcedure, now: ContinuousClock.Instant) -> (GATTProcedureID, [Action]) {
        let id = nextProcedure
        nextProcedure += 1
        var procedure = procedure
        var actions: [Action] = []
        run(procedure.start(mtu: bearer.mtu), procedure, tag: id, now: now, &actions)
        return (GATTProcedureID(rawValue: id), actions)
    }

    /// Write without response (Write Command): sent at once, never answered. Fails when the value
    /// does not fit in one PDU (ATT_MTU − 3 bytes).
    public func writeWithoutResponse(_ value: [UInt8], to handle: UInt16) throws(GATTClientError) -> [Action] {
        guard value.count <= bearer.mtu - 3 else { throw .valueTooLong(value.count) }
        return bearer.send(.writeCommand(ATTWriteCommand(handle: handle, value: value))).compactMap(Self.sendAction)
    }

    /// Fires timeouts; call at ``nextDeadline``.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for event in bearer.tick(now: now) { handleClientSide(event, now: now, &actions) }
        return actions
    }

    /// The link is gone: every running procedure finishes with ``GATTClientError/closed``.
    public mutating func close(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for event in bearer.close() { handleClientSide(event, now: now, &actions) }
        return actions
    }

    /// Tells this link that the value of `characteristic` changed: produces a notification or an
    /// indication if the peer subscribed to it, nothing otherwise.
    public mutating func valueChanged(
        _ characteristic: GATTCharacteristic, value: [UInt8], now: ContinuousClock.Instant
    ) -> [Action] {
        switch server.valueUpdate(for: characteristic, value: value, mtu: bearer.mtu) {
        case .handleValueIndication(let indication)?:
            return bearer.indicate(indication, now: now).compactMap(Self.sendAction)
        case let pdu?:
            return bearer.send(pdu).compactMap(Self.sendAction)
        case nil:
            return []
        }
    }

    private static func sendAction(_ event: ATTBearer.Event) -> Action? {
        if case .send(let bytes) = event { return .send(bytes) }
        return nil
    }

    private mutating func handle(
        _ event: ATTBearer.Event, database: GATTDatabase, now: ContinuousClock.Instant,
        validateWrite: GATTWriteValidator, _ actions: inout [Action]
    ) {
        switch event {
        case .request(let pdu):
            let reply = server.handle(pdu, database: database, mtu: bearer.mtu, validateWrite: validateWrite)
            // Events first: the application sees a write before the peer learns it was accepted.
            actions += reply.events.map(Self.action)
            let response = reply.response ?? GATTServer.error(pdu.opcode, 0, .requestNotSupported)
            if let read = Self.applicationValueRead(pdu, response, database) { actions.append(.valueRead(read)) }
            actions += bearer.respond(response).compactMap(Self.sendAction)
        case .command(let pdu):
            let reply = server.handle(pdu, database: database, mtu: bearer.mtu, validateWrite: validateWrite)
            actions += reply.events.map(Self.action)
        default:
            handleClientSide(event, now: now, &actions)
        }
    }

    /// The application characteristic whose value `response` served, if it did.
    private static func applicationValueRead(_ request: ATTPDU, _ response: ATTPDU, _ database: GATTDatabase) -> GATTCharacteristic? {
        let handle: UInt16
        switch (request, response) {
        case (.readRequest(let read), .readResponse): handle = read.handle
        case (.readBlobRequest(let read), .readBlobResponse): handle = read.handle
        default: return nil
        }
        guard let characteristic = database.characteristic(valueHandle: handle),
            characteristic.service != GATTUUID.genericAccessService, characteristic.service != GATTUUID.genericAttributeService
        else { return nil }
        return characteristic
    }

    private static func action(_ event: GATTServerEvent) -> Action {
        switch event {
        case .write(let write): return .write(write)
        case .writeRefused(let write, let error): return .writeRefused(write, error)
        case .subscriptionChanged(let subscription): return .subscriptionChanged(subscription)
        }
    }

    private mutating func handleClientSide(_ event: ATTBearer.Event, now: ContinuousClock.Instant, _ actions: inout [Action]) {
        switch event {
        case .send(let bytes):
            actions.append(.send(bytes))
        case .notification(let notification):
            actions.append(.notification(handle: notification.handle, value: notification.value))
        case .indication(let indication):
            actions.append(.indication(handle: indication.handle, value: indication.value))
        case .timedOut:
            actions.append(.disconnect)
        case .response(let tag, let pdu):
            guard var procedure = procedures[tag] else { break }
            run(procedure.receive(pdu, mtu: bearer.mtu), procedure, tag: tag, now: now, &actions)
        case .requestFailed(let tag, let failure):
            guard procedures.removeValue(forKey: tag) != nil else { break }
            let error: GATTClientError
            switch failure {
            case .malformedResponse(let reason): error = .invalidResponse("\(reason)")
            case .timedOut: error = .timedOut
            case .closed: error = .closed
            }
            actions.append(.procedureFinished(GATTProcedureID(rawValue: tag), .failure(error)))
        case .request, .command, .indicationConfirmed:
            // Requests and commands never reach here (see `handle`); a confirmation needs no action.
            break
        }
    }

    /// Carries out one step of procedure `tag`: send its next request, or report its end.
    private mutating func run(
        _ step: GATTClientProcedure.Step, _ procedure: GATTClientProcedure, tag: UInt64, now: ContinuousClock.Instant,
        _ actions: inout [Action]
    ) {
        switch step {
        case .send(let pdu):
            procedures[tag] = procedure
            for event in bearer.request(pdu, tag: tag, now: now) { handleClientSide(event, now: now, &actions) }
        case .finished(let result):
            procedures[tag] = nil
            actions.append(.procedureFinished(GATTProcedureID(rawValue: tag), result))
        }
    }
}

/// Identifies a client procedure started on a ``GATTConnection``.
public struct GATTProcedureID: Hashable, Sendable {
    public var rawValue: UInt64
}
