import BLEHost
import Herald

/// Connects the Herald node policy (``SensorNode``) to the LE host runtime: host events in,
/// sensor events and host requests out. Pure: it does no I/O and reads no clock; its owner feeds
/// it the host's events, a tick about once a second and the results of the requests it asked
/// for, and carries out the ``HostWork`` it returns (``NodeLoop`` makes each a host request and
/// hands the reply back as ``Input/result(_:_:)``).
///
/// What it adds to the policy:
/// - every advertising report is classified and becomes ``SensorNode/advert(_:now:into:)``;
/// - the node's connection steps become requests: connect (with the node's attempt timeout, which
///   the host keeps as the attempt's one deadline and reports as `.connectTimedOut`),
///   discovery (one host procedure: MTU exchange, the Herald service 0xFCF6 or else the legacy
///   one, the OpenTrace service when asked, with their characteristics), read of the payload
///   characteristic (a long read), write of the signal characteristic, disconnect; their results
///   go back to the node. A failed discovery is a failed read, never "not Herald": only a peer
///   that answered that it has no Herald service is one;
/// - writes to our signal characteristic, decoded by the write gate on the host's thread, become
///   ``SensorNode/signalWrite(_:from:addressType:now:into:)``
///   with the writer's address, which the host puts in each write; those the gate refused are
///   counted: malformed ones by the node (``SensorNode/signalWriteRejected()``), those that came
///   too fast in ``Counters/rateLimitedWrites``;
/// - the host's state and radio become one ``RadioCondition``, for the node and for the shell.
public struct NodeDriver: Sendable {
    public enum Input: Sendable {
        case host(HostEvent)
        /// About once a second.
        case tick
        /// The host answered a ``HostWork/probe``.
        case probeAnswered
        /// A request the driver asked for finished.
        case result(TargetID, WorkResult)
    }

    /// A request for the host, on behalf of a target's session.
    public enum HostWork: Sendable {
        case connect(TargetID, BluetoothAddress, AddressType, timeout: Duration)
        case gatt(TargetID, GATTStep, HostLink)
        case disconnect(TargetID, HostLink)
        /// Ask the host something its thread must answer (the controller's identity), to prove
        /// the thread still turns; report ``Input/probeAnswered`` when it does.
        case probe
    }

    /// A GATT request of a session, by step.
    public enum GATTStep: Hashable, Sendable {
        /// The MTU exchange, the Herald service (0xFCF6, else the legacy one) and, when asked,
        /// the OpenTrace service, with their characteristics: one composite procedure.
        case discover(openTrace: Bool)
        case readPayload(handle: UInt16)
        case writeSignal([UInt8], handle: UInt16)

        /// The client procedure that carries the step out.
        public var procedure: GATTClientProcedure {
            switch self {
            case .discover(let openTrace):
                let herald = [HeraldUUIDs.service, HeraldUUIDs.legacyService]
                return .discover(openTrace ? [herald, [InteropUUIDs.openTraceService]] : [herald])
            case .readPayload(let handle): return .read(handle)
            case .writeSignal(let value, let handle): return .write(value, to: handle)
            }
        }
    }

    public enum WorkResult: Sendable {
        case connect(Result<HostLink, HostError>)
        case gatt(GATTStep, Result<GATTClientResult, HostError>)
        case disconnect(Result<Void, HostError>)
    }

    /// Things worth logging or signalling; never one per advert.
    public enum Note: Hashable, Sendable {
        /// The radio condition changed.
        case radio(RadioCondition)
        /// Advertising and scanning run for the first time.
        case ready
        /// A phone wrote application data (0x04), which is logged and not stored.
        case immediateData(Target, bytes: Int)
    }

    public struct Output: Sendable {
        public var events: [SensorEvent] = []
        public var work: [HostWork] = []
        public var notes: [Note] = []

        public init() {}

        public mutating func removeAll() {
            events.removeAll(keepingCapacity: true)
            work.removeAll(keepingCapacity: true)
            notes.removeAll(keepingCapacity: true)
        }
    }

    /// One connection the node asked for.
    struct Session: Sendable {
        var target: Target
        var link: HostLink?
        var payloadHandle: UInt16?
        var signalHandle: UInt16?
        var openTraceHandle: UInt16?
    }

    public private(set) var node: SensorNode
    public let classifier: AdvertClassifier
    public private(set) var condition = RadioCondition.starting
    public private(set) var counters = Counters()
    private(set) var sessions: [TargetID: Session] = [:]
    private var ready = false
    /// When the host last showed its thread is alive (an event or a probe answer), and when the
    /// outstanding probe went out.
    private var lastSignOfLife: Double?
    private var probeSentAt: Double?

    /// Probe a quiet host this often; call it stalled after `stallLimit` without any sign of life.
    public static let probeInterval: Double = 5
    public static let stallLimit: Double = 20
    private var actions: [NodeAction] = []
    /// The batch being carried out while the node appends the next to `actions`: the two
    /// arrays trade places, so neither is reallocated per advert.
    private var batch: [NodeAction] = []

    public struct Counters: Hashable, Sendable {
        /// GATT writes the host reported without the writer's address (none do).
        public var writesFromUnknownLinks = 0
        /// Signal writes the host reported without the gate's decoding (none do).
        public var undecodedWrites = 0
        /// Connection attempts and GATT requests that failed (a missing service included).
        public var failedRequests = 0
        /// Well-formed signal writes the gate refused for coming too fast (0x11).
        public var rateLimitedWrites = 0
    }

    public init(node: SensorNode, classifier: AdvertClassifier) {
        self.node = node
        self.classifier = classifier
    }

    /// Whether the host's thread is known to turn: always while there is no working controller
    /// (the host is opening one or waiting to retry, which is not a stall), otherwise only if it
    /// reported an event or answered a probe within ``stallLimit``. The systemd watchdog is fed
    /// only while this holds, so a stalled host gets the service restarted.
    public func hostResponsive(now: Double) -> Bool {
        guard hostIsUp, let last = lastSignOfLife else { return true }
        return now - last <= Self.stallLimit
    }

    private var hostIsUp: Bool {
        switch condition {
        case .running, .partial: return true
        case .starting, .unavailable: return false
        }
    }

    /// Sessions the node runs (its open links are the host's: `HostEngine.linkCount`).
    public var sessionCount: Int { sessions.count }

    public mutating func handle(_ input: Input, now: Double, into out: inout Output) {
        switch input {
        case .host(let event):
            lastSignOfLife = now
            hostEvent(event, now: now, into: &out)
        case .probeAnswered:
            lastSignOfLife = now
            probeSentAt = nil
        case .tick:
            node.tick(now: now, into: &actions)
            if hostIsUp, probeSentAt == nil, now - (lastSignOfLife ?? now) >= Self.probeInterval {
                probeSentAt = now
                out.work.append(.probe)
            }
        case .result(let id, let result):
            self.result(result, for: id, now: now, into: &out)
        }
        drain(now: now, into: &out)
    }

    // MARK: Host events

    private mutating func hostEvent(_ event: HostEvent, now: Double, into out: inout Output) {
        switch event {
        case .advertisingReport(let report):
            node.advert(AdvertSighting(report: report, classifier: classifier), now: now, into: &actions)

        case .gattWrite(let write):
            guard write.characteristic.uuid == HeraldUUIDs.androidSignalCharacteristic else { return }
            guard let address = write.peerAddress, let addressType = write.peerAddressType else {
                counters.writesFromUnknownLinks += 1
                return
            }
            // Decoded by the write gate on the host's thread (the host is always built with it);
            // a write without it was never checked, and is not taken.
            guard let signal = write.decoded as? SignalWrite else {
                counters.undecodedWrites += 1
                return
            }
            node.signalWrite(signal, from: address, addressType: addressType, now: now, into: &actions)

        case .gattWriteRefused(let write, let error):
            guard write.characteristic.uuid == HeraldUUIDs.androidSignalCharacteristic else { return }
            if error == .insufficientResources {
                counters.rateLimitedWrites += 1
            } else {
                node.signalWriteRejected()
            }

        case .connected:
            break

        case .disconnected(let link, _):
            guard let id = sessions.first(where: { $0.value.link?.handle == link.handle })?.key else { return }
            sessions[id] = nil
            node.link(.disconnected, target: id, now: now, into: &actions)

        case .state(let state):
            switch state {
            case .opening:
                // Reopening after a failure is still "unavailable" until the radio runs again.
                if case .unavailable = condition { break }
                change(to: .starting, into: &out)
            case .ready:
                break  // the radio event says when advertising and scanning run
            case .recovering(let reason), .unavailable(let reason):
                // Links and requests die with the controller session; the node forgets its sessions.
                // Also at a failed reopen while already unavailable, when the node has started
                // connections meanwhile (it ticks on): their requests are never answered, and a
                // session the node kept would block its connections for good (issue 27).
                let hadSessions = !sessions.isEmpty
                sessions = [:]
                if case .unavailable = condition, !hadSessions {} else { node.bluetoothState(.unavailable(reason), now: now, into: &actions) }
                change(to: .unavailable(reason), into: &out)
            }

        case .radio(let radio):
            node.controllerScansWhileConnecting = radio.scansWhileConnecting
            let running = radio.advertising && radio.scanning
            if running, condition != .running { node.bluetoothState(.running, now: now, into: &actions) }
            change(to: running ? .running : .partial(advertising: radio.advertising, scanning: radio.scanning), into: &out)
            if running, !ready {
                ready = true
                out.notes.append(.ready)
            }

        case .subscriptionChanged, .notification:
            break
        }
    }

    private mutating func change(to condition: RadioCondition, into out: inout Output) {
        guard condition != self.condition else { return }
        self.condition = condition
        out.notes.append(.radio(condition))
    }

    // MARK: Node actions

    /// Carries out the node's actions; steps answered at once (no handle to read, say) feed the
    /// node again until nothing is left.
    private mutating func drain(now: Double, into out: inout Output) {
        var current: [NodeAction] = []
        swap(&current, &batch)
        while !actions.isEmpty {
            swap(&current, &actions)
            for action in current { perform(action, now: now, into: &out) }
            current.removeAll(keepingCapacity: true)
        }
        swap(&current, &batch)
    }

    private mutating func perform(_ action: NodeAction, now: Double, into out: inout Output) {
        switch action {
        case .event(let event):
            out.events.append(event)

        case .connect(let target):
            sessions[target.id] = Session(target: target)
            let seconds = node.attemptTimeout(of: target.id) ?? node.configuration.connectionAttemptTimeout
            let timeout = Duration.milliseconds(Int64(seconds * 1000))
            out.work.append(.connect(target.id, target.address, target.addressType, timeout: timeout))

        case .discover(let target, let openTrace):
            guard let link = sessions[target.id]?.link else { return }
            out.work.append(.gatt(target.id, .discover(openTrace: openTrace), link))

        case .readPayload(let target, let source):
            let session = sessions[target.id]
            let handle = source == .herald ? session?.payloadHandle : session?.openTraceHandle
            guard let link = session?.link, let handle else {
                node.link(.readFailed, target: target.id, now: now, into: &actions)
                return
            }
            out.work.append(.gatt(target.id, .readPayload(handle: handle), link))

        case .writeSignal(let target, let write):
            guard let session = sessions[target.id], let link = session.link, let handle = session.signalHandle,
                let bytes = try? write.encoded()
            else {
                node.link(.signalWritten, target: target.id, now: now, into: &actions)
                return
            }
            out.work.append(.gatt(target.id, .writeSignal(bytes, handle: handle), link))

        case .disconnect(let target):
            guard let session = sessions[target.id] else { return }
            if let link = session.link, link.role == .peripheral {
                // The phone had connected to us first and the host lent us its link: leave it up
                // for the phone, the node's session is over.
                sessions[target.id] = nil
                node.link(.disconnected, target: target.id, now: now, into: &actions)
            } else if let link = session.link {
                out.work.append(.disconnect(target.id, link))
            }
            // Without a link the session is still connecting, which the node never gives up:
            // the host ends the attempt at its deadline.

        case .immediateData(let target, let data):
            out.notes.append(.immediateData(target, bytes: data.count))
        }
    }

    // MARK: Request results

    private mutating func result(_ result: WorkResult, for id: TargetID, now: Double, into out: inout Output) {
        guard var session = sessions[id] else { return }
        switch result {
        case .connect(.success(let link)):
            session.link = link
            sessions[id] = session
            node.link(.connected, target: id, now: now, into: &actions)

        case .connect(.failure(let error)):
            counters.failedRequests += 1
            sessions[id] = nil
            switch error {
            case .connectionFailed(.connectionLimitExceeded): node.link(.connectRefused, target: id, now: now, into: &actions)
            case .connectionFailed(.connectionTimeout): node.link(.connectTimedOut, target: id, now: now, into: &actions)
            default: node.link(.connectFailed, target: id, now: now, into: &actions)
            }

        case .disconnect(let outcome):
            // Normally the host's disconnection event ends the session; a link already gone ends it here.
            if case .failure = outcome, sessions[id] != nil {
                sessions[id] = nil
                node.link(.disconnected, target: id, now: now, into: &actions)
            }

        case .gatt(let step, let outcome):
            if case .failure = outcome { counters.failedRequests += 1 }
            gatt(step, outcome, session: &session, now: now)
            if sessions[id] != nil { sessions[id] = session }
        }
    }

    private mutating func gatt(_ step: GATTStep, _ outcome: Result<GATTClientResult, HostError>, session: inout Session, now: Double) {
        let id = session.target.id
        guard session.link != nil else { return }
        switch step {
        case .discover:
            guard case .success(.discovered(let found)) = outcome else {
                node.link(.readFailed, target: id, now: now, into: &actions)
                return
            }
            var services = DiscoveredServices.none
            if let herald = found.service(HeraldUUIDs.service, HeraldUUIDs.legacyService) {
                session.payloadHandle = herald.valueHandle(of: HeraldUUIDs.payloadCharacteristic)
                if let ios = herald.valueHandle(of: HeraldUUIDs.iosSignalCharacteristic) {
                    session.signalHandle = ios
                    services.signal = .ios
                } else if let android = herald.valueHandle(of: HeraldUUIDs.androidSignalCharacteristic) {
                    session.signalHandle = android
                    services.signal = .android
                }
                services.heraldPayload = session.payloadHandle != nil
            }
            session.openTraceHandle = found.service(InteropUUIDs.openTraceService)?.valueHandle(of: InteropUUIDs.openTraceCharacteristic)
            services.openTrace = session.openTraceHandle != nil
            node.link(.discovered(services), target: id, now: now, into: &actions)

        case .readPayload:
            if case .success(.value(let bytes)) = outcome {
                node.link(.payloadRead(bytes), target: id, now: now, into: &actions)
            } else {
                node.link(.readFailed, target: id, now: now, into: &actions)
            }

        case .writeSignal:
            node.link(.signalWritten, target: id, now: now, into: &actions)
        }
    }
}
