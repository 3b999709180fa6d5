extension LinkManager {
    /// Issues the next radio command that brings the controller closer to what is wanted, if
    /// none is outstanding. Order: connection timeout, random address, connection attempts
    /// (which need scanning off), scanning, advertising. The machines return the commands; this
    /// sends them, one exclusive command at a time.
    mutating func reconcile(now: ContinuousClock.Instant, into actions: inout [Action]) {
        // Queued attempts whose deadline passed before their turn.
        for attempt in initiator.expireQueued(now: now) {
            actions.append(.connectionFailed(peer: attempt.peer.address, addressType: attempt.peer.type, status: .connectionTimeout))
        }
        guard case .ready = phase else { return }
        if let cancel = initiator.cancelIfDue(now: now, createInFlight: sequencer.busy == .createConnection) {
            send(cancel, now: now, into: &actions)
        }
        if let peer = initiator.giveUpIfUnanswered(now: now) {
            // No LE Connection Complete after the cancel: the attempt is over all the same.
            attemptEnded(peer, status: .connectionTimeout, into: &actions)
        }
        guard sequencer.mayStart(now: now) else { return }
        if let command = sequencer.addressCommand {
            send(command, now: now, into: &actions)
            return
        }
        if nextConnectionStep(now: now, into: &actions) { return }
        if let command = scanner.nextCommand(allowed: scansWhileInitiating || !initiator.hasAttempt) {
            send(command, now: now, into: &actions)
            return
        }
        if let command = advertiser.nextCommand(acceptsConnections: acceptsConnections) {
            send(command, now: now, into: &actions)
        }
    }

    /// Whether scanning may stay on while a connection is initiated (see ``LinkManager``).
    public var scansWhileInitiating: Bool {
        guard case .asSupportedStatesSay = initiator.scanning, let info = controllerInfo, let scan = scanner.desired else { return false }
        let combination: UInt64 = scan.type == .active ? 1 << 23 : 1 << 22
        return info.supportedStates & combination != 0
    }

    /// Whether a peer may take a link now: the open links, the links being refused and our
    /// attempt (running or about to start) leave one free under the cap.
    public var acceptsConnections: Bool {
        !linkTable.isFull(adding: initiator.hasAttempt ? 1 : 0)
    }

    /// Starts the next queued attempt if it may start; true if a command went out.
    private mutating func nextConnectionStep(now: ContinuousClock.Instant, into actions: inout [Action]) -> Bool {
        let step = initiator.next(
            freeLinks: linkTable.free, advertisingTakesConnections: advertiser.takesConnections, isScanning: scanner.isScanning,
            scansWhileInitiating: scansWhileInitiating)
        switch step {
        case .none:
            return false
        case .refused(let attempts):
            for attempt in attempts {
                actions.append(.connectionFailed(peer: attempt.peer.address, addressType: attempt.peer.type, status: .connectionLimitExceeded))
            }
            return false
        case .stopScanning:
            send(Scanner.disable, now: now, into: &actions)
            return true
        case .create(let command):
            send(command, now: now, into: &actions)
            return true
        }
    }

    /// A radio command ended: the machine that asked for it learns the outcome, then the next
    /// command goes out.
    mutating func radioCompleted(
        _ step: RadioStep, _ opcode: HCIOpcode, _ result: HCICommandResult, now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        if result == .cancelled { return }
        sequencer.ended(step)
        let status = result.status ?? .unspecifiedError
        // "Command disallowed" says the controller is already in the state asked for (enable on
        // an enabled scan, disable on a disabled one: btvirt and others), or still advertising or
        // scanning when parameters are changed.
        let failed: Bool
        switch step {
        case .setRandomAddress:
            failed = sequencer.addressCompleted(status: status)
        case .advertisingDisable, .advertisingParameters, .advertisingData, .scanResponseData, .advertisingEnable:
            failed = advertiser.completed(step, status: status)
        case .scanDisable, .scanParameters, .scanEnable:
            failed = scanner.completed(step, status: status)
        case .createConnection:
            // Command Status 0: the attempt runs until LE Connection Complete or its deadline;
            // a refusal ends it (below).
            failed = !status.isSuccess
        case .cancelConnection:
            // 0x0C: nothing left to cancel; LE Connection Complete is on its way or the
            // cancelling deadline ends the attempt.
            failed = !status.isSuccess && status != .commandDisallowed
        }

        if failed {
            actions.append(.commandFailed(opcode, status))
            if step == .createConnection {
                // 0x0C while scanning: the attempt is made again with scanning off (within its
                // deadline), and so is every later one.
                if let peer = initiator.createRefused(status: status) { attemptEnded(peer, status: status, into: &actions) }
            } else if step != .cancelConnection {
                sequencer.backOff(now: now)
            }
        } else if status.isSuccess {
            sequencer.succeeded()
        }
        reconcile(now: now, into: &actions)
    }
}
