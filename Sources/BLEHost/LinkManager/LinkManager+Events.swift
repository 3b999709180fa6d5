extension LinkManager {
    /// Feeds every HCI event from the controller (the link manager needs all of them: command
    /// completions, link events, and any event at all as a sign of life).
    /// Events while stopped (after a reset was asked for, before ``start(now:into:)``) are
    /// ignored: they describe a controller state that is about to be thrown away.
    public mutating func handle(_ event: HCIEvent, now: ContinuousClock.Instant, into actions: inout [Action]) {
        if case .off = phase { return }
        health.heard(at: now)
        switch event {
        case .commandComplete, .commandStatus:
            var queueActions: [HCICommandQueue.Action] = []
            queue.handle(event, now: now, into: &queueActions)
            process(queueActions, now: now, into: &actions)
        case .le(.advertisingReport(let reports)):
            actions.append(.advertisingReports(reports))
        case .le(.connectionComplete(let complete)), .le(.enhancedConnectionComplete(let complete)):
            connectionComplete(complete, now: now, into: &actions)
        case .disconnectionComplete(let complete):
            guard complete.status.isSuccess else { return }
            if let link = linkTable.remove(complete.handle) {
                actions.append(.connectionClosed(link, reason: complete.reason))
            } else if !linkTable.removeRefused(complete.handle) {
                return
            }
            linksChanged(now: now, into: &actions)
        case .le(.connectionUpdateComplete(let update)):
            guard update.status.isSuccess,
                let link = linkTable.update(
                    update.handle, interval: update.interval, latency: update.latency, supervisionTimeout: update.supervisionTimeout)
            else { return }
            actions.append(.connectionUpdated(link))
        case .le(.longTermKeyRequest(let request)):
            // No pairing, so no keys: say so at once rather than let the peer wait.
            enqueue(LELongTermKeyRequestNegativeReply(handle: request.handle).commandPacket, .quiet, now: now, into: &actions)
        case .hardwareError(let code):
            requestReset(.hardwareError(code: code), into: &actions)
        default:
            break
        }
    }

    private mutating func connectionComplete(_ complete: LEConnectionComplete, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard complete.status.isSuccess else {
            if let failure = initiator.failed(status: complete.status) {
                // 0x02 answering the cancel sent at the attempt's deadline is reported as 0x08.
                attemptEnded(failure.peer, status: failure.status, into: &actions)
                reconcile(now: now, into: &actions)
            } else if complete.status == .advertisingTimeout {
                advertiser.ended()
                reconcile(now: now, into: &actions)
            }
            return
        }
        let link = LELink(
            handle: complete.handle, role: complete.role, peerAddress: complete.peerAddress,
            peerAddressType: complete.peerAddressType, interval: complete.interval, latency: complete.latency,
            supervisionTimeout: complete.supervisionTimeout)
        if complete.role == .central {
            initiator.connected()
        } else {
            // Legacy connectable advertising ends when a central connects.
            advertiser.ended()
            if linkTable.isFull(adding: initiator.isActive ? 1 : 0) {
                refuse(link, now: now, into: &actions)
                return
            }
        }
        linkTable.add(link)
        actions.append(.connectionOpened(link))
        linksChanged(now: now, into: &actions)
    }

    /// A peer connected while every link was taken (links and our attempt): the controller
    /// accepted it before advertising stopped taking connections. It is disconnected at once
    /// with 0x14 "remote device terminated: low resources", the reason the spec gives for a
    /// device that cannot keep a connection for want of resources (0x0D "rejected: limited
    /// resources" answers connection requests and is no valid Disconnect reason; 0x13 would
    /// claim the user ended it).
    mutating func refuse(_ link: LELink, now: ContinuousClock.Instant, into actions: inout [Action]) {
        linkTable.refuse(link)
        actions.append(.connectionRefused(link))
        enqueue(Disconnect(handle: link.handle, reason: .remoteLowResources).commandPacket, .disconnect(link.handle), now: now, into: &actions)
        linksChanged(now: now, into: &actions)
    }

    /// A link opened or closed: scanning is re-asserted (some controllers stop it silently),
    /// advertising resumes if the cap allows.
    private mutating func linksChanged(now: ContinuousClock.Instant, into actions: inout [Action]) {
        scanner.reassert()
        reconcile(now: now, into: &actions)
    }

    /// The running connection attempt is over without a link (the ``Initiator`` is idle again):
    /// scanning is re-asserted and the failure reported.
    mutating func attemptEnded(_ peer: Peer, status: HCIStatus, into actions: inout [Action]) {
        scanner.reassert()
        actions.append(.connectionFailed(peer: peer.address, addressType: peer.type, status: status))
    }

    /// A command of the link manager's own ended.
    mutating func completed(
        _ purpose: Purpose, _ opcode: HCIOpcode, _ result: HCICommandResult, now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        switch purpose {
        case .initStep:
            guard case .initializing(var initializer) = phase, let step = initializer.handle(opcode, result) else { return }
            phase = .initializing(initializer)
            apply(step, now: now, into: &actions)
        case .radio(let step):
            radioCompleted(step, opcode, result, now: now, into: &actions)
        case .probe:
            health.probeEnded()
        case .owner:
            break  // reported by `process`
        case .disconnect(let handle):
            guard let status = result.status, !status.isSuccess else { return }
            actions.append(.commandFailed(opcode, status))
            // The controller does not know the link: it is gone.
            guard status == .unknownConnectionIdentifier else { return }
            if let link = linkTable.remove(handle) {
                actions.append(.connectionClosed(link, reason: status))
                linksChanged(now: now, into: &actions)
            } else if linkTable.removeRefused(handle) {
                linksChanged(now: now, into: &actions)
            }
        case .quiet:
            if let status = result.status, !status.isSuccess { actions.append(.commandFailed(opcode, status)) }
        }
    }
}
