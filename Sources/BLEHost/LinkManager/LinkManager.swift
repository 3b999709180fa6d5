/// The one owner of the controller's state: init, advertising, scanning, initiating and the
/// set of links. A value with no I/O: the owner feeds it every HCI event and clock ticks, calls
/// its methods for what the application wants, and carries out the returned ``Action``s in
/// order (mostly `.send(packet)`).
///
/// The application states what it *wants* (``setAdvertising(_:now:into:)``,
/// ``setScanning(_:now:into:)``, ``connect(to:addressType:now:into:)``); the link manager works
/// out the command sequences, one radio command at a time, through its ``HCICommandQueue``:
/// - advertising changes: disable → parameters → data → scan response → enable;
/// - scanning changes: disable (0x0C on an already-off scan is fine) → parameters → enable with
///   duplicate filtering off;
/// - connecting: LE Create Connection → cancel after the connect timeout → LE Connection
///   Complete (0x02 when cancelled). Scanning stays on while the controller initiates if its
///   LE Supported States list the combination (bit 22 passive, 23 active scanning with
///   initiating); otherwise, or once the controller refused an attempt while scanning (0x0C),
///   scanning stops for each attempt and restarts after it;
/// - legacy connectable advertising stops when a peer connects: it is enabled again, and again
///   when a link closes;
/// - the connection cap counts links and our own attempt: once they could fill the last link,
///   advertising (ADV_IND) turns into the same advert without connections (ADV_SCAN_IND, or
///   ADV_NONCONN_IND without a scan response), so the venue stays visible but no peer can take
///   a link our attempt may need. An attempt that would fill the last link starts only once
///   advertising no longer takes connections. A peer that connects beyond the cap all the same
///   (a race with the controller) is disconnected with 0x14. Connectable advertising returns
///   when a link or the attempt ends;
/// - scanning is re-asserted after every link change, as some controllers stop it silently;
/// - enabling what the controller already has enabled (0x0C) counts as enabled;
/// - after a long silence the controller is probed with a harmless command; only a command that
///   goes unanswered within the command timeout asks for a reset. Silence is no fault.
///
/// Inside, the work is split by concern, as Zephyr's host splits it (`adv.c`, `scan.c`,
/// `conn.c`), into small machines that each hold their own state and *return* what they want
/// done: ``Advertiser`` and ``Scanner`` (the next ``RadioCommand``), ``Initiator`` (attempts
/// and their deadlines: an ``Initiator/Step``, a cancel command, the attempts that ended),
/// ``LinkTable`` (links, refused links, the cap), ``HealthProbe`` (the probe command) and
/// ``RadioSequencer`` (one exclusive radio command at a time, back-off, the random address).
/// This facade owns the shared ``HCICommandQueue`` and the controller's init phase, sends what
/// the machines return, routes each completion back to the machine whose command it was, and
/// appends the resulting ``Action``s to the caller's array.
public struct LinkManager: Sendable {
    enum Phase: Sendable {
        case off
        case initializing(ControllerInitializer)
        case ready(ControllerInfo)
    }

    /// Whose command a queued command is, so its completion goes back to its owner.
    enum Purpose: Sendable {
        case initStep
        case radio(RadioStep)
        case probe
        case owner
        case disconnect(UInt16)
        case quiet
    }

    public let configuration: Configuration
    var phase = Phase.off
    /// The shared command queue: every machine's commands and the owner's go through it.
    var queue: HCICommandQueue
    var purposes: [HCICommandQueue.Token: Purpose] = [:]
    var advertiser = Advertiser()
    var scanner = Scanner()
    var initiator: Initiator
    var linkTable: LinkTable
    var health: HealthProbe
    var sequencer: RadioSequencer

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        queue = HCICommandQueue(timeout: configuration.commandTimeout)
        initiator = Initiator(configuration: configuration)
        linkTable = LinkTable(maximum: configuration.maximumConnections)
        health = HealthProbe(silence: configuration.silenceBeforeProbe)
        sequencer = RadioSequencer(retryDelay: configuration.retryDelay, randomAddress: configuration.randomAddress)
    }

    // What the application wants.
    public var desiredAdvertising: AdvertisingConfiguration? { advertiser.desired }
    public var desiredScanning: LESetScanParameters? { scanner.desired }

    // What the controller is believed to do.
    public var links: [UInt16: LELink] { linkTable.links }
    public var isAdvertising: Bool { advertiser.isAdvertising }
    public var isScanning: Bool { scanner.isScanning }
    /// Peripheral links beyond the cap, being disconnected: never reported, but the controller
    /// holds them until Disconnection Complete, so they count against the cap.
    var refusedLinks: [UInt16: LELink] { linkTable.refused }

    /// The controller, once the init sequence has finished.
    public var controllerInfo: ControllerInfo? {
        if case .ready(let info) = phase { return info }
        return nil
    }

    /// True while a connection attempt is being made or cancelled.
    public var isInitiating: Bool { initiator.isActive }

    /// When ``tick(now:into:)`` must next run (nil: only events and calls can change anything).
    public var nextDeadline: ContinuousClock.Instant? {
        var earliest = queue.nextDeadline
        earliest.lower(to: sequencer.retryAt)
        earliest.lower(to: initiator.nextDeadline)
        if case .ready = phase { earliest.lower(to: health.deadline) }
        return earliest
    }

    // MARK: Lifecycle

    /// Starts (or restarts) the controller: HCI Reset and the init sequence, then the desired
    /// advertising and scanning. Open links, attempts and commands from before end first.
    public mutating func start(now: ContinuousClock.Instant, into actions: inout [Action]) {
        stop(into: &actions)
        health.heard(at: now)
        var initializer = ControllerInitializer()
        let step = initializer.start()
        phase = .initializing(initializer)
        apply(step, now: now, into: &actions)
    }

    /// Forgets the controller (closed or being reset): links close with reason 0x16, attempts
    /// fail, commands are cancelled. The desired advertising and scanning stay for the next start.
    public mutating func stop(into actions: inout [Action]) {
        var queueActions: [HCICommandQueue.Action] = []
        queue.cancelAll(into: &queueActions)
        for case .complete(let token, let opcode, let result) in queueActions {
            if case .owner = purposes[token] { actions.append(.commandResult(token, opcode, result)) }
        }
        purposes.removeAll()
        for link in linkTable.removeAll() { actions.append(.connectionClosed(link, reason: .localHostTerminated)) }
        for peer in initiator.removeAll() {
            actions.append(.connectionFailed(peer: peer.address, addressType: peer.type, status: .localHostTerminated))
        }
        phase = .off
        advertiser.reset()
        scanner.reset()
        sequencer.reset()
        health.stop()
    }

    // MARK: What the application wants

    /// Advertise with this configuration, or stop advertising (nil).
    public mutating func setAdvertising(_ advertising: AdvertisingConfiguration?, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard advertiser.want(advertising) else { return }
        reconcile(now: now, into: &actions)
    }

    /// Scan continuously with these parameters (duplicate filtering off), or stop (nil).
    public mutating func setScanning(_ parameters: LESetScanParameters?, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard scanner.want(parameters) else { return }
        reconcile(now: now, into: &actions)
    }

    /// Connect to a peer as central (use the address type from its advertising report), giving
    /// up `timeout` from now (default ``Configuration/connectTimeout``): the attempt's one
    /// deadline, whether it is still queued behind another or running. Ends in
    /// ``Action/connectionOpened(_:)`` or ``Action/connectionFailed(peer:addressType:status:)``
    /// (0x08 at the deadline; a link that comes up while the cancel is on its way is opened).
    /// Attempts run one at a time; an attempt at the connection cap is refused at once; one to a
    /// peer already being connected to joins it.
    public mutating func connect(
        to address: BluetoothAddress, addressType: AddressType, timeout: Duration? = nil, now: ContinuousClock.Instant,
        into actions: inout [Action]
    ) {
        let peer = Peer(address: address, type: addressType)
        if linkTable.hasLink(to: address) {
            actions.append(.connectionFailed(peer: address, addressType: addressType, status: .connectionAlreadyExists))
            return
        }
        if initiator.isConnecting(to: peer) { return }
        if linkTable.isFull(adding: initiator.attemptCount) {
            actions.append(.connectionFailed(peer: address, addressType: addressType, status: .connectionLimitExceeded))
            return
        }
        initiator.enqueue(Attempt(peer: peer, deadline: now + (timeout ?? configuration.connectTimeout)))
        reconcile(now: now, into: &actions)
    }

    /// Disconnects a link. Ends in ``Action/connectionClosed(_:reason:)``.
    public mutating func disconnect(
        handle: UInt16, reason: HCIStatus = .remoteUserTerminated, now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        guard linkTable.links[handle] != nil else { return }
        enqueue(Disconnect(handle: handle, reason: reason).commandPacket, .disconnect(handle), now: now, into: &actions)
    }

    /// Refuses a peer's link the owner does not want (its address is in backoff): it is
    /// disconnected at once with 0x14, like a link beyond the cap, and ends in
    /// ``Action/connectionRefused(_:)``, never in ``Action/connectionClosed(_:reason:)``. Call it
    /// right after ``Action/connectionOpened(_:)``, before the link is used.
    public mutating func refuse(handle: UInt16, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard let link = linkTable.remove(handle) else { return }
        refuse(link, now: now, into: &actions)
    }

    /// Applies new connection parameters to a link (e.g. after accepting an L2CAP Connection
    /// Parameter Update Request as central). Ends in ``Action/connectionUpdated(_:)``.
    public mutating func updateConnection(
        handle: UInt16, parameters: LEConnectionParameters, now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        guard linkTable.links[handle] != nil else { return }
        enqueue(LEConnectionUpdate(handle: handle, parameters: parameters).commandPacket, .quiet, now: now, into: &actions)
    }

    /// Sends any other command through the same queue (e.g. Read RSSI). Its result comes back
    /// as ``Action/commandResult(_:_:_:)`` with the returned token. Commands that change
    /// advertising, scanning or connections belong to the link manager: do not send those.
    @discardableResult
    public mutating func send(_ command: HCICommandPacket, now: ContinuousClock.Instant, into actions: inout [Action]) -> HCICommandQueue.Token {
        enqueue(command, .owner, now: now, into: &actions)
    }

    // MARK: Time

    /// Runs timers: command timeouts, the connect timeout, retries and the health probe.
    public mutating func tick(now: ContinuousClock.Instant, into actions: inout [Action]) {
        var queueActions: [HCICommandQueue.Action] = []
        queue.tick(now: now, into: &queueActions)
        process(queueActions, now: now, into: &actions)
        guard case .ready = phase else { return }

        if let probe = health.probeIfDue(now: now) {
            enqueue(probe, .probe, now: now, into: &actions)
            scanner.reassert()
        }
        reconcile(now: now, into: &actions)
    }

    // MARK: Plumbing

    @discardableResult
    mutating func enqueue(_ command: HCICommandPacket, _ purpose: Purpose, now: ContinuousClock.Instant, into actions: inout [Action])
        -> HCICommandQueue.Token
    {
        var queueActions: [HCICommandQueue.Action] = []
        let token = queue.enqueue(command, now: now, into: &queueActions)
        purposes[token] = purpose
        process(queueActions, now: now, into: &actions)
        return token
    }

    /// Sends a radio command a machine returned. `exclusive` radio commands run one at a time.
    mutating func send(_ command: RadioCommand, now: ContinuousClock.Instant, into actions: inout [Action]) {
        sequencer.sent(command)
        enqueue(command.packet, .radio(command.step), now: now, into: &actions)
    }

    mutating func process(_ queueActions: [HCICommandQueue.Action], now: ContinuousClock.Instant, into actions: inout [Action]) {
        for action in queueActions {
            switch action {
            case .send(let packet):
                actions.append(.send(packet))
            case .complete(let token, let opcode, let result):
                guard let purpose = purposes.removeValue(forKey: token) else { continue }
                if case .owner = purpose { actions.append(.commandResult(token, opcode, result)) }
                if result == .timedOut {
                    requestReset(.commandTimeout(opcode), into: &actions)
                    return
                }
                completed(purpose, opcode, result, now: now, into: &actions)
            }
        }
    }

    mutating func requestReset(_ reason: ResetReason, into actions: inout [Action]) {
        stop(into: &actions)
        actions.append(.resetController(reason))
    }

    mutating func apply(_ step: ControllerInitializer.Step, now: ContinuousClock.Instant, into actions: inout [Action]) {
        switch step {
        case .send(let command):
            enqueue(command, .initStep, now: now, into: &actions)
        case .done(let info):
            phase = .ready(info)
            health.heard(at: now)
            actions.append(.ready(info))
            reconcile(now: now, into: &actions)
        case .failed(let failure):
            stop(into: &actions)
            actions.append(.initializationFailed(failure))
        }
    }
}
