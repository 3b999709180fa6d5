import BLEHost
import Synchronization

/// The running LE host: the one owner of the controller's transport and of all protocol state.
///
/// A dedicated thread (never a cooperative-pool thread) opens the transport, feeds every packet
/// to the pure ``HostEngine`` (HCI command queue, init sequence, link manager, ACL flow control,
/// L2CAP, ATT/GATT per link) and carries out what it returns: packets to send, events for the
/// layers above (through the bounded ``events`` queue, which counts what it drops), replies to
/// requests. When the controller fails (transport error, command timeout, hardware error) the
/// session ends, pending requests fail, and the transport is reopened with backoff.
///
/// Use: start ``run()`` in a task (the daemon's service, or a CLI command's task group), consume
/// ``events``, make requests (``connect(to:type:timeout:)``, ``gatt(_:on:)``, …) from any task.
/// Cancelling the task running ``run()`` stops the host.
///
/// What the thread drives is a ``HostSession``: the engine alone (the command line, above), or
/// the engine with an application's loop on top (the venue node's `NodeCore`), which takes the
/// engine's events on this thread and hands its own output on; ``events`` then stays empty.
/// Between controller sessions (backing off) the thread keeps ticking the session at its
/// deadlines.
public final class BluetoothHost: Sendable {
    public struct Options: Sendable {
        /// Keep retrying when the controller cannot be opened (the daemon) rather than failing
        /// ``run()`` with the error (a CLI command).
        public var retryOpen: Bool
        /// How many advertising reports ``events`` holds for a consumer that falls behind; beyond
        /// it the oldest half of them are dropped (and counted). No other event is ever dropped.
        public var eventCapacity: Int
        /// btsnoop capture of all traffic, if wanted.
        public var capturePath: String?
        public var backoff: ReopenBackoff

        public init(retryOpen: Bool = true, eventCapacity: Int = 1024, capturePath: String? = nil, backoff: ReopenBackoff = .init()) {
            self.retryOpen = retryOpen
            self.eventCapacity = eventCapacity
            self.capturePath = capturePath
            self.backoff = backoff
        }
    }

    public let device: HCITransportSpec
    public let options: Options
    /// Everything the host reports, in order. One consumer. Only advertising reports are ever
    /// dropped (see ``EventQueue``).
    public let events: EventQueue<HostEvent>

    /// Makes what the thread drives: the engine, or the engine under an application's loop.
    private let makeSession: @Sendable () -> any HostSession
    private let shared = Mutex(Shared())
    private let waker = ThreadWaker()

    private struct Shared {
        var state: RunState = .idle
        var inbox: [(HostRequestID, HostRequest)] = []
        var waiting: [HostRequestID: CheckedContinuation<Result<HostReply, HostError>, Never>] = [:]
        var nextRequest: UInt64 = 1
        var transport: (any HCITransport)?
    }

    private enum RunState { case idle, running, stopping, finished }

    /// A host whose thread drives a ``HostEngine`` of `configuration`; its events go to ``events``.
    public convenience init(device: HCITransportSpec, configuration: HostConfiguration, options: Options = .init()) {
        self.init(device: device, options: options) { HostEngine(configuration: configuration) }
    }

    /// A host whose thread drives the session `makeSession` makes (once, when the thread starts):
    /// an application loop on top of the engine consumes the events itself, on this thread.
    public init(device: HCITransportSpec, options: Options = .init(), session makeSession: @escaping @Sendable () -> any HostSession) {
        self.device = device
        self.makeSession = makeSession
        self.options = options
        self.events = EventQueue(capacity: options.eventCapacity, kind: \.kind) { event in
            if case .advertisingReport = event { return true }
            return false
        }
    }

    // MARK: Running

    /// Runs the host until the calling task is cancelled (returns normally then). Throws when
    /// the controller cannot be opened and ``Options/retryOpen`` is false. Runs once per host.
    public func run() async throws(HCITransportError) {
        let started = shared.withLock { s -> Bool in
            guard s.state == .idle else { return false }
            s.state = .running
            return true
        }
        guard started else { return }
        let outcome: Result<Void, HCITransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DedicatedThread.start(name: "ble-host") { [self] in
                    continuation.resume(returning: threadMain())
                }
            }
        } onCancel: {
            stop()
        }
        try outcome.get()
    }

    /// Asks the host to stop; ``run()`` returns once the controller is released.
    public func stop() {
        let transport = shared.withLock { s -> (any HCITransport)? in
            if s.state == .running { s.state = .stopping }
            return s.transport
        }
        transport?.wakeUp()
        waker.wake()
    }

    // MARK: Requests

    /// The controller's identity and capabilities, once initialised (waits for that).
    public func controllerInfo() async throws(HostError) -> ControllerInfo {
        guard case .controllerInfo(let info) = try await perform(.controllerInfo) else { throw .unexpectedReply }
        return info
    }

    /// Connects to a peer as central (stopping and restarting the scan around it); fails with
    /// ``HostError/connectionFailed(_:)`` after `timeout`.
    public func connect(to address: BluetoothAddress, type: AddressType, timeout: Duration = .seconds(10))
        async throws(HostError) -> HostLink
    {
        guard case .link(let link) = try await perform(.connect(address, type, timeout: timeout)) else {
            throw .unexpectedReply
        }
        return link
    }

    /// Runs a GATT client procedure on a link (discovery, reads including long values, writes).
    public func gatt(_ procedure: GATTClientProcedure, on link: HostLink) async throws(HostError) -> GATTClientResult {
        guard case .gatt(let result) = try await perform(.gatt(procedure, link: link.handle)) else {
            throw .unexpectedReply
        }
        return result
    }

    /// Write without response (ATT Write Command): queued on the link, never answered.
    public func writeWithoutResponse(_ value: [UInt8], to valueHandle: UInt16, on link: HostLink) async throws(HostError) {
        _ = try await perform(.writeWithoutResponse(value, handle: valueHandle, link: link.handle))
    }

    /// Replaces a dynamic characteristic value of our GATT server and notifies subscribers.
    public func setValue(_ value: [UInt8], forCharacteristic valueHandle: UInt16) async throws(HostError) {
        _ = try await perform(.setValue(value, handle: valueHandle))
    }

    /// Switches the configured advertising and scanning on or off; they stay so when the
    /// controller is reopened. Returns once the change is queued to the controller.
    public func setRadio(advertising: Bool, scanning: Bool) async throws(HostError) {
        _ = try await perform(.setRadio(advertising: advertising, scanning: scanning))
    }

    /// Disconnects a link (reason 0x13, remote user terminated); returns once it is gone.
    public func disconnect(_ link: HostLink) async throws(HostError) {
        _ = try await perform(.disconnect(link: link.handle))
    }

    /// Any request, answered by the host's thread (the methods above are this with their reply
    /// unpacked).
    public func perform(_ request: HostRequest) async throws(HostError) -> HostReply {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<HostReply, HostError>, Never>) in
            let transport = shared.withLock { s -> (any HCITransport)?? in
                // Requests made before the thread starts wait for it.
                guard s.state == .running || s.state == .idle else { return .none }
                let id = HostRequestID(rawValue: s.nextRequest)
                s.nextRequest += 1
                s.inbox.append((id, request))
                s.waiting[id] = continuation
                return .some(s.transport)
            }
            guard let transport else {
                continuation.resume(returning: .failure(.notRunning))
                return
            }
            transport?.wakeUp()
            waker.wake()
        }
        return try result.get()
    }

    // MARK: The host thread

    /// Sessions until stopped: open, run the engine, close, back off.
    private func threadMain() -> Result<Void, HCITransportError> {
        var backoff = options.backoff
        var engine = makeSession()
        defer {
            let waiting = shared.withLock { s in
                s.state = .finished
                s.inbox = []
                defer { s.waiting = [:] }
                return s.waiting
            }
            for continuation in waiting.values { continuation.resume(returning: .failure(.notRunning)) }
            events.finish()
        }
        while !stopping {
            execute(engine.report(.opening(device.description), now: .now), on: nil)
            let transport: any HCITransport
            do {
                transport = try device.open(capturePath: options.capturePath)
            } catch {
                execute(engine.report(.unavailable(error.description), now: .now), on: nil)
                guard options.retryOpen else { return .failure(error) }
                pause(backoff.delay(afterSessionLasting: nil), &engine)
                continue
            }
            shared.withLock { $0.transport = transport }
            let opened = ContinuousClock.now
            let reason = session(transport, &engine)
            execute(engine.stop(reason: reason, now: .now), on: nil)
            shared.withLock { $0.transport = nil }
            transport.close()
            if stopping { break }
            execute(engine.report(.recovering(reason), now: .now), on: nil)
            pause(backoff.delay(afterSessionLasting: ContinuousClock.now - opened), &engine)
        }
        return .success(())
    }

    /// Waits out a backoff without a controller, ticking the session at its deadlines (a loop on
    /// top of the engine keeps its time); returns early when stopped.
    private func pause(_ delay: Duration, _ engine: inout any HostSession) {
        let end = ContinuousClock.now + delay
        // A deadline that a tick without a controller does not move (a timer that only a
        // session ends) is not ticked again in this pause.
        var stuck: ContinuousClock.Instant?
        while !stopping {
            let now = ContinuousClock.now
            let deadline = engine.nextDeadline.flatMap { $0 == stuck ? nil : $0 }
            if let deadline, deadline <= now {
                execute(engine.tick(now: now), on: nil)
                if engine.nextDeadline == deadline { stuck = deadline }
                continue
            }
            guard now < end else { return }
            waker.sleep(min(end, deadline ?? end) - now)
        }
    }

    private var stopping: Bool { shared.withLock { $0.state != .running } }

    /// One controller session; returns why it ended.
    private func session(_ transport: any HCITransport, _ engine: inout any HostSession) -> String {
        if let reason = execute(engine.start(now: .now), on: transport) { return reason }
        while true {
            let requests = shared.withLock { s -> [(HostRequestID, HostRequest)]? in
                guard s.state == .running else { return nil }
                defer { s.inbox = [] }
                return s.inbox
            }
            guard let requests else { return "stopped" }
            for (id, request) in requests {
                if let reason = execute(engine.perform(request, id: id, now: .now), on: transport) { return reason }
            }
            let timeout = engine.nextDeadline.map { max($0 - ContinuousClock.now, .zero) }
            let packets: [H4Packet]
            do {
                packets = try transport.receive(timeout: timeout)
            } catch {
                return error.description
            }
            for packet in packets {
                if let reason = execute(engine.receive(packet, now: .now), on: transport) { return reason }
            }
            if let deadline = engine.nextDeadline, deadline <= .now {
                if let reason = execute(engine.tick(now: .now), on: transport) { return reason }
            }
        }
    }

    /// Carries out the engine's actions; returns a reason when the session must end.
    @discardableResult
    private func execute(_ actions: [HostAction], on transport: (any HCITransport)?) -> String? {
        var restart: String?
        for action in actions {
            switch action {
            case .send(let packet):
                guard let transport, restart == nil else { continue }
                do {
                    try transport.send(packet)
                } catch {
                    restart = error.description
                }
            case .emit(let event):
                events.push(event)
            case .reply(let id, let result):
                let continuation = shared.withLock { $0.waiting.removeValue(forKey: id) }
                continuation?.resume(returning: result)
            case .restart(let reason):
                restart = restart ?? reason
            }
        }
        return restart
    }
}
