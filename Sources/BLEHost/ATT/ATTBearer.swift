/// The ATT bearer of one link, in both roles at once (Core Vol 3 Part F 3.3): a pure state
/// machine. Bytes from L2CAP CID 4 go in through ``receive(_:now:)``; what to send and what
/// happened come out as ``Event``s. Time is injected; the owner calls ``tick(now:)`` at
/// ``nextDeadline``.
///
/// - Server side: one request from the peer at a time; each surfaces as ``Event/request(_:)``
///   and must be answered with ``respond(_:)``. Malformed requests are answered here with
///   "Invalid PDU"; unknown commands are dropped.
/// - Client side: at most one request of ours outstanding, the rest queued behind it in order;
///   responses are matched to the outstanding request (anything else is dropped and counted).
///   Our indications also go one at a time, each waiting for its confirmation.
/// - A request of ours unanswered within ``requestTimeout`` (ATT's transaction timeout, 30 s,
///   unless the owner chose a shorter one for its own requests), or an indication unconfirmed
///   for 30 s, kills the bearer: every pending request fails, ``Event/timedOut`` tells the owner
///   to disconnect the link, and nothing more is sent.
public struct ATTBearer: Sendable {
    public static let defaultMTU = 23
    public static let maximumMTU = 517
    public static let transactionTimeout: Duration = .seconds(30)

    /// How long a request of ours waits for its response before the bearer is given up: ATT's
    /// ``transactionTimeout`` unless the owner chose shorter (at most that).
    public let requestTimeout: Duration

    public enum Event: Hashable, Sendable {
        /// Transmit this PDU on the ATT channel.
        case send([UInt8])
        /// A request from the peer: answer it with ``respond(_:)`` (the only request surfaced
        /// until then).
        case request(ATTPDU)
        /// A command from the peer (Write Command); never answered.
        case command(ATTPDU)
        /// The response (or Error Response) to our request `tag`.
        case response(tag: UInt64, ATTPDU)
        /// Our request `tag` got no usable response.
        case requestFailed(tag: UInt64, ATTRequestFailure)
        case notification(ATTHandleValueNotification)
        /// An indication from the peer; its confirmation is already in the events before it.
        case indication(ATTHandleValueIndication)
        /// The peer confirmed our indication.
        case indicationConfirmed
        /// A transaction timed out: the bearer is dead; disconnect the link.
        case timedOut
    }

    /// PDUs dropped instead of handled, for diagnostics.
    public struct Counters: Hashable, Sendable {
        /// PDUs that did not decode (requests among them were answered with "Invalid PDU").
        public var malformed = 0
        /// Responses or confirmations that matched nothing outstanding.
        public var unexpected = 0
        /// Unknown or unsupported commands and notifications, and requests sent while the
        /// peer's previous request was still unanswered.
        public var ignored = 0
    }

    private struct QueuedRequest: Sendable {
        var tag: UInt64
        var pdu: ATTPDU
    }

    private struct OutstandingRequest: Sendable {
        var tag: UInt64
        var opcode: ATTOpcode
        var deadline: ContinuousClock.Instant
    }

    /// The ATT_MTU in force: 23 until an MTU exchange (either direction) completes.
    public private(set) var mtu = ATTBearer.defaultMTU
    /// True once a transaction timed out or ``close()`` was called.
    public private(set) var isClosed = false
    public private(set) var counters = Counters()

    private var outstanding: OutstandingRequest?
    private var queue: [QueuedRequest] = []
    private var indicationDeadline: ContinuousClock.Instant?
    private var indicationQueue: [ATTHandleValueIndication] = []
    /// The peer's request we have not answered yet.
    private var peerRequest: ATTOpcode?
    private var peerClientRxMTU = ATTBearer.defaultMTU
    private var ourClientRxMTU = ATTBearer.defaultMTU

    public init(requestTimeout: Duration = ATTBearer.transactionTimeout) {
        self.requestTimeout = min(max(requestTimeout, .zero), Self.transactionTimeout)
    }

    /// When ``tick(now:)`` must next run, if anything is waiting for the peer.
    public var nextDeadline: ContinuousClock.Instant? {
        switch (outstanding?.deadline, indicationDeadline) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    /// True while the peer has a request of ours (or an indication) to answer.
    public var isAwaitingPeer: Bool { outstanding != nil || indicationDeadline != nil }

    /// One PDU received on the ATT channel.
    public mutating func receive(_ bytes: ArraySlice<UInt8>, now: ContinuousClock.Instant) -> [Event] {
        var events = tick(now: now)
        guard !isClosed else { return events }
        // Nothing may exceed the ATT MTU in either direction: a longer request is answered as an
        // invalid PDU (echoing it, as a Prepare Write Response would, would break the MTU too).
        guard bytes.count <= mtu else {
            let opcode = bytes.first.map { ATTOpcode(rawValue: $0) }
            let reason = DecodeError(.lengthMismatch, field: "pdu", detail: "\(bytes.count) bytes exceed the ATT MTU \(mtu)")
            receiveMalformed(ATTDecodeError(opcode: opcode, reason: reason), now: now, &events)
            return events
        }
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU.decode(bytes)
        } catch {
            receiveMalformed(error, now: now, &events)
            return events
        }
        let opcode = pdu.opcode
        switch opcode.kind ?? (opcode.isCommand ? .command : .request) {
        case .request:
            guard peerRequest == nil else {
                counters.ignored += 1
                break
            }
            peerRequest = opcode
            if case .exchangeMTURequest(let request) = pdu {
                peerClientRxMTU = max(Int(request.clientRxMTU), Self.defaultMTU)
            }
            events.append(.request(pdu))
        case .command:
            if case .unsupported = pdu {
                counters.ignored += 1
            } else {
                events.append(.command(pdu))
            }
        case .response:
            guard let current = outstanding, current.opcode.responseOpcode == opcode || isError(pdu, for: current.opcode)
            else {
                counters.unexpected += 1
                break
            }
            if case .exchangeMTUResponse(let response) = pdu {
                mtu = Self.effectiveMTU(ourClientRxMTU, Int(response.serverRxMTU))
            }
            outstanding = nil
            events.append(.response(tag: current.tag, pdu))
            sendNextRequest(now: now, &events)
        case .notification:
            if case .handleValueNotification(let notification) = pdu {
                events.append(.notification(notification))
            } else {
                counters.ignored += 1
            }
        case .indication:
            if case .handleValueIndication(let indication) = pdu {
                events.append(.send(ATTHandleValueConfirmation().encoded()))
                events.append(.indication(indication))
            }
        case .confirmation:
            guard indicationDeadline != nil else {
                counters.unexpected += 1
                break
            }
            indicationDeadline = nil
            events.append(.indicationConfirmed)
            sendNextIndication(now: now, &events)
        }
        return events
    }

    /// Answers the peer's pending request (the one from the last ``Event/request(_:)``).
    /// Does nothing when no request is pending.
    public mutating func respond(_ response: ATTPDU) -> [Event] {
        guard !isClosed, peerRequest != nil else { return [] }
        peerRequest = nil
        let bytes = response.encoded()
        if case .exchangeMTUResponse(let mtuResponse) = response {
            mtu = Self.effectiveMTU(peerClientRxMTU, Int(mtuResponse.serverRxMTU))
        }
        return [.send(bytes)]
    }

    /// Sends a request of ours now, or queues it behind the outstanding one. Its response comes
    /// back as ``Event/response(tag:_:)`` with the same `tag`.
    public mutating func request(_ pdu: ATTPDU, tag: UInt64, now: ContinuousClock.Instant) -> [Event] {
        guard !isClosed else { return [.requestFailed(tag: tag, .closed)] }
        queue.append(QueuedRequest(tag: tag, pdu: pdu))
        var events: [Event] = []
        sendNextRequest(now: now, &events)
        return events
    }

    /// Sends a PDU that needs no answer (Write Command, notification) right away.
    public func send(_ pdu: ATTPDU) -> [Event] {
        isClosed ? [] : [.send(pdu.encoded())]
    }

    /// Sends an indication now, or queues it until the previous one is confirmed.
    public mutating func indicate(_ indication: ATTHandleValueIndication, now: ContinuousClock.Instant) -> [Event] {
        guard !isClosed else { return [] }
        indicationQueue.append(indication)
        var events: [Event] = []
        sendNextIndication(now: now, &events)
        return events
    }

    /// Fires the transaction timeout when its deadline has passed.
    public mutating func tick(now: ContinuousClock.Instant) -> [Event] {
        guard !isClosed, let deadline = nextDeadline, deadline <= now else { return [] }
        var events = failAll(.timedOut)
        events.append(.timedOut)
        return events
    }

    /// The link is gone: fails every pending request with ``ATTRequestFailure/closed``.
    public mutating func close() -> [Event] {
        guard !isClosed else { return [] }
        return failAll(.closed)
    }

    private mutating func failAll(_ failure: ATTRequestFailure) -> [Event] {
        isClosed = true
        var events: [Event] = []
        if let current = outstanding { events.append(.requestFailed(tag: current.tag, failure)) }
        events += queue.map { .requestFailed(tag: $0.tag, failure) }
        outstanding = nil
        queue = []
        indicationQueue = []
        indicationDeadline = nil
        return events
    }

    private mutating func receiveMalformed(_ error: ATTDecodeError, now: ContinuousClock.Instant, _ events: inout [Event]) {
        counters.malformed += 1
        guard let opcode = error.opcode, !opcode.isCommand else { return }
        switch opcode.kind {
        case .request, nil:
            // Answered like any request, so it also waits its turn behind an unanswered one.
            if peerRequest == nil {
                events.append(.send(ATTErrorResponse(requestOpcode: opcode, handle: 0, error: .invalidPDU).encoded()))
            }
        case .response:
            if let current = outstanding, current.opcode.responseOpcode == opcode || opcode == .errorResponse {
                outstanding = nil
                events.append(.requestFailed(tag: current.tag, .malformedResponse(error.reason)))
                sendNextRequest(now: now, &events)
            }
        case .command, .notification, .indication, .confirmation:
            break
        }
    }

    private func isError(_ pdu: ATTPDU, for opcode: ATTOpcode) -> Bool {
        if case .errorResponse(let error) = pdu { return error.requestOpcode == opcode }
        return false
    }

    private mutating func sendNextRequest(now: ContinuousClock.Instant, _ events: inout [Event]) {
        guard outstanding == nil, !queue.isEmpty else { return }
        let next = queue.removeFirst()
        if case .exchangeMTURequest(let request) = next.pdu {
            ourClientRxMTU = max(Int(request.clientRxMTU), Self.defaultMTU)
        }
        outstanding = OutstandingRequest(tag: next.tag, opcode: next.pdu.opcode, deadline: now + requestTimeout)
        events.append(.send(next.pdu.encoded()))
    }

    private mutating func sendNextIndication(now: ContinuousClock.Instant, _ events: inout [Event]) {
        guard indicationDeadline == nil, !indicationQueue.isEmpty else { return }
        let next = indicationQueue.removeFirst()
        indicationDeadline = now + Self.transactionTimeout
        events.append(.send(ATTPDU.handleValueIndication(next).encoded()))
    }

    static func effectiveMTU(_ a: Int, _ b: Int) -> Int {
        min(max(min(a, b), defaultMTU), maximumMTU)
    }
}

/// Why a request of ours got no usable response.
public enum ATTRequestFailure: Error, Hashable, Sendable {
    /// The response had the right opcode but did not decode.
    case malformedResponse(DecodeError)
    /// No response within the bearer's ``ATTBearer/requestTimeout``: the bearer is dead.
    case timedOut
    /// The bearer was closed (link gone, or an earlier timeout).
    case closed
}
