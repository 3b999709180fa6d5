/// All protocol state of the host, as one value driven by its owner (the host thread): the
/// ``LinkManager`` (command queue, init, advertising, scanning, connections), the
/// ``LinkDataPath`` of the open links (ACL flow control, L2CAP, ATT/GATT) and the GATT database,
/// plus the requests of the layers above that are still running. No I/O: every method takes the
/// time and returns ``HostAction``s for the owner to carry out in order.
///
/// A session is one controller lifetime: ``start(now:)`` after the transport opened,
/// ``stop(reason:now:)`` when it closed or failed. The database and the wanted advertising and
/// scanning survive sessions; links and running requests do not.
public struct HostEngine: Sendable {
    /// Input dropped rather than trusted.
    public struct Counters: Hashable, Sendable {
        public var malformedEvents = 0
        /// H4 packets of types a host never receives (commands, SCO, ISO, unknown).
        public var unexpectedPackets = 0
    }

    public let configuration: HostConfiguration
    public private(set) var database: GATTDatabase
    public private(set) var counters = Counters()
    private var manager: LinkManager
    /// Phones' links: the idle limit and the backoff of addresses dropped for idleness.
    private var inbound: InboundLinkGuard
    /// Exists while the controller is initialised (it needs the controller's ACL buffer sizes).
    private var data: LinkDataPath?
    private var infoWaiters: [HostRequestID] = []
    /// Connect requests by peer; the link manager holds each attempt and its deadline.
    private var connects: [BluetoothAddress: [HostRequestID]] = [:]
    private var disconnects: [UInt16: [HostRequestID]] = [:]
    private var procedures: [ProcedureKey: HostRequestID] = [:]
    private var reportedRadio = RadioState(advertising: false, scanning: false)
    /// Whether the configured advertising and scanning are switched on (``HostRequest/setRadio(advertising:scanning:)``).
    private var switchedOn: RadioState

    private struct ProcedureKey: Hashable, Sendable {
        var link: UInt16
        var id: GATTProcedureID
    }

    public init(configuration: HostConfiguration) {
        self.configuration = configuration
        self.database = configuration.database
        self.manager = LinkManager(configuration: configuration.linkManager)
        self.inbound = InboundLinkGuard(configuration: configuration.inboundLinks)
        self.switchedOn = configuration.switchedOn
    }

    /// The controller, once initialised in this session.
    public var controllerInfo: ControllerInfo? { manager.controllerInfo }
    public var openLinks: [HostLink] { data?.openLinks ?? [] }
    /// Open links, ours and phones' (without building ``openLinks``).
    public var linkCount: Int { data?.linkCount ?? 0 }
    public var dataPathCounters: LinkDataPath.Counters? { data?.counters }
    /// Phones' links dropped for idleness and refused in backoff.
    public var inboundCounters: InboundLinkGuard.Counters { inbound.counters }

    /// When ``tick(now:)`` must run next. Asked before every wait of the host's loop: allocates
    /// nothing.
    public var nextDeadline: ContinuousClock.Instant? {
        var earliest = manager.nextDeadline
        earliest.lower(to: data?.nextDeadline)
        earliest.lower(to: inbound.nextDeadline)
        return earliest
    }

    // MARK: Sessions

    /// The transport is open: reset and initialise the controller, then advertise and scan as configured.
    public mutating func start(now: ContinuousClock.Instant) -> [HostAction] {
        var out = startSession(now: now)
        appendRadioChanges(to: &out)
        return out
    }

    private mutating func startSession(now: ContinuousClock.Instant) -> [HostAction] {
        var actions: [LinkManager.Action] = []
        applySwitches(now: now, into: &actions)
        manager.start(now: now, into: &actions)
        return translate(actions, now: now)
    }

    /// The session is over (transport closed or failed, reset asked for): links are gone and
    /// running requests fail with `reason`.
    public mutating func stop(reason: String, now: ContinuousClock.Instant) -> [HostAction] {
        var out = endSession(reason: reason, now: now)
        appendRadioChanges(to: &out)
        return out
    }

    private mutating func endSession(reason: String, now: ContinuousClock.Instant) -> [HostAction] {
        var actions: [LinkManager.Action] = []
        manager.stop(into: &actions)
        var out = translate(actions, now: now)
        out += translate(data?.removeAll(now: now) ?? [], now: now)
        data = nil
        inbound.removeAllLinks()
        let failure = HostError.sessionEnded(reason)
        let pending = infoWaiters + connects.values.flatMap { $0 } + disconnects.values.flatMap { $0 } + procedures.values
        out += pending.sorted { $0.rawValue < $1.rawValue }.map { .reply($0, .failure(failure)) }
        infoWaiters = []
        connects = [:]
        disconnects = [:]
        procedures = [:]
        return out
    }

    // MARK: Input

    /// One packet from the controller.
    public mutating func receive(_ packet: H4Packet, now: ContinuousClock.Instant) -> [HostAction] {
        var out = handlePacket(packet, now: now)
        appendRadioChanges(to: &out)
        return out
    }

    private mutating func handlePacket(_ packet: H4Packet, now: ContinuousClock.Instant) -> [HostAction] {
        switch packet.type {
        case .event:
            let event: HCIEvent
            do {
                event = try HCIEvent(decoding: packet.body)
            } catch {
                counters.malformedEvents += 1
                return []
            }
            var out: [HostAction] = []
            if case .numberOfCompletedPackets(let completed) = event {
                for entry in completed {
                    out += translate(data?.completed(Int(entry.completedPackets), handle: entry.handle) ?? [], now: now)
                }
            }
            var actions: [LinkManager.Action] = []
            manager.handle(event, now: now, into: &actions)
            // Not `out + …`: that copies, once a packet (the hot path: each advertising report).
            if out.isEmpty { return translate(actions, now: now) }
            out += translate(actions, now: now)
            return out
        case .acl:
            let (database, validate) = (self.database, configuration.validateWrite)
            let outputs = data?.receive(acl: packet.body, database: database, validateWrite: validate, now: now)
            return translate(outputs ?? [], now: now)
        default:
            counters.unexpectedPackets += 1
            return []
        }
    }

    /// A request from the layers above; its reply comes now or in a later action.
    public mutating func perform(_ request: HostRequest, id: HostRequestID, now: ContinuousClock.Instant) -> [HostAction] {
        var out = handleRequest(request, id: id, now: now)
        appendRadioChanges(to: &out)
        return out
    }

    private mutating func handleRequest(_ request: HostRequest, id: HostRequestID, now: ContinuousClock.Instant) -> [HostAction] {
        switch request {
        case .controllerInfo:
            if let info = manager.controllerInfo { return [.reply(id, .success(.controllerInfo(info)))] }
            infoWaiters.append(id)
            return []

        case .connect(let address, let type, let timeout):
            if let link = data?.openLinks.first(where: { $0.peerAddress == address }) {
                return [.reply(id, .success(.link(link)))]
            }
            if connects[address] != nil {
                // Joins the attempt under way (and its deadline).
                connects[address]?.append(id)
                return []
            }
            connects[address] = [id]
            var actions: [LinkManager.Action] = []
            manager.connect(to: address, addressType: type, timeout: timeout, now: now, into: &actions)
            return translate(actions, now: now)

        case .disconnect(let handle):
            guard data?.link(handle) != nil else { return [.reply(id, .failure(.noSuchLink(handle)))] }
            disconnects[handle, default: []].append(id)
            return disconnect(handle, now: now)

        case .gatt(let procedure, let handle):
            guard let (procedureID, outputs) = data?.start(procedure, link: handle, now: now) else {
                return [.reply(id, .failure(.noSuchLink(handle)))]
            }
            procedures[ProcedureKey(link: handle, id: procedureID)] = id
            return translate(outputs, now: now)

        case .writeWithoutResponse(let value, let valueHandle, let handle):
            guard data != nil else { return [.reply(id, .failure(.noSuchLink(handle)))] }
            do {
                let outputs = try data?.writeWithoutResponse(value, to: valueHandle, link: handle) ?? []
                return translate(outputs, now: now) + [.reply(id, .success(.done))]
            } catch {
                return [.reply(id, .failure(error))]
            }

        case .setRadio(let advertising, let scanning):
            switchedOn = RadioState(advertising: advertising, scanning: scanning)
            var actions: [LinkManager.Action] = []
            applySwitches(now: now, into: &actions)
            return translate(actions, now: now) + [.reply(id, .success(.done))]

        case .setValue(let value, let valueHandle):
            do {
                try database.setValue(value, forCharacteristic: valueHandle)
            } catch {
                return [.reply(id, .failure(.database(error)))]
            }
            guard let characteristic = database.characteristic(valueHandle: valueHandle) else {
                return [.reply(id, .success(.done))]
            }
            let outputs = data?.valueChanged(characteristic, value: value, now: now) ?? []
            return translate(outputs, now: now) + [.reply(id, .success(.done))]
        }
    }

    /// The configured advertising and scanning, each unless switched off.
    private mutating func applySwitches(now: ContinuousClock.Instant, into actions: inout [LinkManager.Action]) {
        manager.setAdvertising(switchedOn.advertising ? configuration.advertising : nil, now: now, into: &actions)
        manager.setScanning(switchedOn.scanning ? configuration.scanning : nil, now: now, into: &actions)
    }

    /// Timers: command and ATT timeouts, connection attempts, retries, the health probe.
    public mutating func tick(now: ContinuousClock.Instant) -> [HostAction] {
        var out = runTimers(now: now)
        appendRadioChanges(to: &out)
        return out
    }

    private mutating func runTimers(now: ContinuousClock.Instant) -> [HostAction] {
        var actions: [LinkManager.Action] = []
        manager.tick(now: now, into: &actions)
        var out = translate(actions, now: now)
        out += translate(data?.tick(now: now) ?? [], now: now)
        // Phones' links idle too long: dropped (Disconnection Complete reports them as usual).
        for handle in inbound.tick(now: now) { out += disconnect(handle, now: now) }
        return out
    }

    // MARK: Plumbing

    /// A ``HostEvent/radio(_:)`` event when advertising or scanning changed.
    private mutating func appendRadioChanges(to out: inout [HostAction]) {
        let now = RadioState(
            advertising: manager.isAdvertising, scanning: manager.isScanning, scansWhileConnecting: manager.scansWhileInitiating)
        guard now != reportedRadio else { return }
        reportedRadio = now
        out.append(.emit(.radio(now)))
    }

    private mutating func disconnect(_ handle: UInt16, now: ContinuousClock.Instant) -> [HostAction] {
        _ = data?.markClosing(link: handle)
        var actions: [LinkManager.Action] = []
        manager.disconnect(handle: handle, now: now, into: &actions)
        return translate(actions, now: now)
    }

    private mutating func translate(_ actions: [LinkManager.Action], now: ContinuousClock.Instant) -> [HostAction] {
        var out: [HostAction] = []
        for action in actions {
            switch action {
            case .send(let bytes):
                out.append(.send(H4Packet(type: .command, body: Array(bytes.dropFirst()))))
            case .ready(let info):
                data = LinkDataPath(
                    aclDataLength: info.aclDataLength, aclBufferCount: info.aclPacketCount,
                    requestTimeout: configuration.requestTimeout)
                out.append(.emit(.state(.ready)))
                out += infoWaiters.map { .reply($0, .success(.controllerInfo(info))) }
                infoWaiters = []
            case .initializationFailed(let failure):
                out.append(.restart(failure.description))
            case .resetController(let reason):
                out.append(.restart(reason.description))
            case .advertisingReports(let reports):
                for report in reports { out.append(.emit(.advertisingReport(report))) }
            case .connectionOpened(let opened):
                let link = HostLink(
                    handle: opened.handle, peerAddress: opened.peerAddress, peerAddressType: opened.peerAddressType,
                    role: opened.role)
                if opened.role == .peripheral {
                    guard inbound.admits(opened.peerAddress, now: now) else {
                        inbound.refused()
                        var refused: [LinkManager.Action] = []
                        manager.refuse(handle: opened.handle, now: now, into: &refused)
                        out += translate(refused, now: now)
                        continue
                    }
                    inbound.opened(opened.handle, address: opened.peerAddress, now: now)
                }
                data?.opened(link)
                out.append(.emit(.connected(link)))
                if opened.role == .central, let requests = connects.removeValue(forKey: opened.peerAddress) {
                    out += requests.map { .reply($0, .success(.link(link))) }
                }
            case .connectionFailed(let peer, _, let status):
                if let requests = connects.removeValue(forKey: peer) {
                    out += requests.map { .reply($0, .failure(.connectionFailed(status))) }
                }
            case .connectionClosed(let closed, let reason):
                let link = HostLink(
                    handle: closed.handle, peerAddress: closed.peerAddress, peerAddressType: closed.peerAddressType,
                    role: closed.role)
                inbound.closed(closed.handle)
                out += translate(data?.closed(handle: closed.handle, now: now) ?? [], now: now)
                out.append(.emit(.disconnected(link, reason: reason)))
                out += (disconnects.removeValue(forKey: closed.handle) ?? []).map { .reply($0, .success(.done)) }
            case .connectionRefused, .connectionUpdated, .commandResult, .commandFailed:
                break
            }
        }
        return out
    }

    private mutating func translate(_ outputs: [LinkDataPath.Output], now: ContinuousClock.Instant) -> [HostAction] {
        var out: [HostAction] = []
        for output in outputs {
            switch output {
            case .send(let packet):
                out.append(.send(packet))
            case .event(let event):
                out.append(.emit(event))
            case .useful(let link):
                inbound.useful(link, now: now)
            case .procedureFinished(let link, let procedureID, let result):
                guard let id = procedures.removeValue(forKey: ProcedureKey(link: link, id: procedureID)) else { continue }
                out.append(.reply(id, result.map { .gatt($0) }.mapError { .gatt($0) }))
            case .disconnect(let link):
                var actions: [LinkManager.Action] = []
                manager.disconnect(handle: link, now: now, into: &actions)
                out += translate(actions, now: now)
            case .updateConnection(let link, let parameters):
                var actions: [LinkManager.Action] = []
                manager.updateConnection(handle: link, parameters: parameters, now: now, into: &actions)
                out += translate(actions, now: now)
            }
        }
        return out
    }
}
