extension LinkManager {
    /// Issues the next radio command that brings the controller closer to what is wanted, if
    /// none is outstanding. Order: connection timeout, random address, connection attempts
    /// (which need scanning off), scanning, advertising.
    mutating func reconcile(now: ContinuousClock.Instant, into actions: inout [Action]) {
        // Queued attempts whose deadline passed before their turn.
        if connectQueue.contains(where: { now >= $0.deadline }) {
            for attempt in connectQueue where now >= attempt.deadline {
                actions.append(.connectionFailed(peer: attempt.peer.address, addressType: attempt.peer.type, status: .connectionTimeout))
            }
            connectQueue.removeAll { now >= $0.deadline }
        }
        guard case .ready = phase else { return }
        if case .creating(let attempt) = initiating, now >= attempt.deadline, radioBusy != .createConnection {
            initiating = .cancelling(attempt.peer, answerBy: now + configuration.commandTimeout)
            sendRadio(LECreateConnectionCancel(), .cancelConnection, now: now, into: &actions, exclusive: false)
        }
        if case .cancelling(let peer, let answerBy) = initiating, now >= answerBy {
            // No LE Connection Complete after the cancel: the attempt is over all the same.
            endAttempt(peer, status: .connectionTimeout, into: &actions)
        }
        guard radioBusy == nil else { return }
        if let retry = retryAt {
            guard now >= retry else { return }
            retryAt = nil
        }
        if let address = configuration.randomAddress, !randomAddressSet {
            sendRadio(LESetRandomAddress(address: address), .setRandomAddress, now: now, into: &actions)
            return
        }
        if nextConnectionStep(now: now, into: &actions) { return }
        if nextScanStep(now: now, into: &actions) { return }
        nextAdvertisingStep(now: now, into: &actions)
    }

    /// Whether scanning may stay on while a connection is initiated (see ``LinkManager``).
    public var scansWhileInitiating: Bool {
        guard !initiatingNeedsScanningOff, let info = controllerInfo, let scan = desiredScanning else { return false }
        let combination: UInt64 = scan.type == .active ? 1 << 23 : 1 << 22
        return info.supportedStates & combination != 0
    }

    /// Whether a peer may take a link now: the open links, the links being refused and our
    /// attempt (running or about to start) leave one free under the cap.
    public var acceptsConnections: Bool {
        links.count + refusedLinks.count + (isInitiating || !connectQueue.isEmpty ? 1 : 0) < configuration.maximumConnections
    }

    /// The advertising parameters wanted now (nil: none). While no peer may take a link,
    /// ADV_IND becomes the same advert without connections: ADV_SCAN_IND (ADV_NONCONN_IND when
    /// there is no scan response), so phones keep seeing the venue; directed advertising stops.
    var advertisingParameters: LESetAdvertisingParameters? {
        guard let desired = desiredAdvertising else { return nil }
        var parameters = desired.parameters
        guard parameters.type.isConnectable, !acceptsConnections else { return parameters }
        guard parameters.type == .connectableUndirected else { return nil }
        parameters.type = desired.scanResponse.bytes.isEmpty ? .nonConnectableUndirected : .scannableUndirected
        // Core 4.x (the Pi 3B's controller is 4.1) allows these two types no interval under 100 ms.
        parameters.intervalMin = max(parameters.intervalMin, 0x00A0)
        parameters.intervalMax = max(parameters.intervalMax, parameters.intervalMin)
        return parameters
    }

    /// A peer could connect to what the controller advertises now.
    var advertisingTakesConnections: Bool {
        isAdvertising && advertisingParametersSet?.type.isConnectable != false
    }

    private mutating func nextConnectionStep(now: ContinuousClock.Instant, into actions: inout [Action]) -> Bool {
        guard !isInitiating, !connectQueue.isEmpty else { return false }
        if links.count + refusedLinks.count >= configuration.maximumConnections {
            for attempt in connectQueue {
                actions.append(.connectionFailed(peer: attempt.peer.address, addressType: attempt.peer.type, status: .connectionLimitExceeded))
            }
            connectQueue.removeAll()
            return false
        }
        if links.count + refusedLinks.count + 1 >= configuration.maximumConnections, advertisingTakesConnections {
            // This attempt may fill the last link: first advertising stops taking connections
            // (the advertising step), or a peer could take that link while we initiate.
            return false
        }
        if isScanning, !scansWhileInitiating {
            sendRadio(LESetScanEnable(false), .scanDisable, now: now, into: &actions)
            return true
        }
        let attempt = connectQueue.removeFirst()
        createdWhileScanning = isScanning
        initiating = .creating(attempt)
        let command = LECreateConnection(
            peerAddress: attempt.peer.address, peerAddressType: attempt.peer.type, ownAddressType: configuration.ownAddressType,
            scanInterval: configuration.initiatorScanInterval, scanWindow: configuration.initiatorScanWindow,
            connection: configuration.connectionParameters)
        sendRadio(command, .createConnection, now: now, into: &actions)
        return true
    }

    private mutating func nextScanStep(now: ContinuousClock.Instant, into actions: inout [Action]) -> Bool {
        guard let parameters = desiredScanning, scansWhileInitiating || (!isInitiating && connectQueue.isEmpty) else {
            guard isScanning else { return false }
            sendRadio(LESetScanEnable(false), .scanDisable, now: now, into: &actions)
            return true
        }
        if scanWork.contains(.disable) {
            sendRadio(LESetScanEnable(false), .scanDisable, now: now, into: &actions)
        } else if scanWork.contains(.parameters) {
            sendRadio(parameters, .scanParameters, now: now, into: &actions)
        } else if !isScanning {
            sendRadio(LESetScanEnable(true, filterDuplicates: false), .scanEnable, now: now, into: &actions)
        } else {
            return false
        }
        return true
    }

    private mutating func nextAdvertisingStep(now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard let desired = desiredAdvertising, let parameters = advertisingParameters else {
            if isAdvertising { sendRadio(LESetAdvertisingEnable(false), .advertisingDisable, now: now, into: &actions) }
            return
        }
        if parameters != advertisingParametersSet, !advertisingWork.contains(.parameters) {
            // Legacy advertising parameters change only while advertising is disabled.
            advertisingWork.insert(isAdvertising ? [.disable, .parameters] : .parameters)
        }
        if advertisingWork.contains(.disable) {
            sendRadio(LESetAdvertisingEnable(false), .advertisingDisable, now: now, into: &actions)
        } else if advertisingWork.contains(.parameters) {
            advertisingParametersSent = parameters
            sendRadio(parameters, .advertisingParameters, now: now, into: &actions)
        } else if advertisingWork.contains(.data) {
            sendRadio(LESetAdvertisingData(desired.data), .advertisingData, now: now, into: &actions)
        } else if advertisingWork.contains(.scanResponse) {
            sendRadio(LESetScanResponseData(desired.scanResponse), .scanResponseData, now: now, into: &actions)
        } else if !isAdvertising {
            sendRadio(LESetAdvertisingEnable(true), .advertisingEnable, now: now, into: &actions)
        }
    }

    /// A radio command ended: update what the controller is believed to do, then go on.
    mutating func radioCompleted(
        _ step: RadioStep, _ opcode: HCIOpcode, _ result: HCICommandResult, now: ContinuousClock.Instant, into actions: inout [Action]
    ) {
        if result == .cancelled { return }
        if radioBusy == step { radioBusy = nil }
        let status = result.status ?? .unspecifiedError
        // "Command disallowed" says the controller is already in the state asked for (enable on
        // an enabled scan, disable on a disabled one: btvirt and others), or still advertising or
        // scanning when parameters are changed.
        let disallowed = status == .commandDisallowed
        var failed = !status.isSuccess

        switch step {
        case .setRandomAddress:
            randomAddressSet = status.isSuccess
        case .advertisingDisable:
            isAdvertising = false
            advertisingWork.remove(.disable)
            failed = failed && !disallowed
        case .advertisingParameters, .advertisingData, .scanResponseData:
            if step == .advertisingParameters { advertisingParametersSet = status.isSuccess ? advertisingParametersSent : nil }
            if status.isSuccess {
                advertisingWork.remove(step == .advertisingParameters ? .parameters : step == .advertisingData ? .data : .scanResponse)
            } else {
                if disallowed { isAdvertising = true }
                advertisingWork = .all
            }
        case .advertisingEnable:
            if status.isSuccess || disallowed {
                isAdvertising = true
                failed = false
            } else {
                advertisingWork = .all
            }
        case .scanDisable:
            isScanning = false
            scanWork.remove(.disable)
            failed = failed && !disallowed
        case .scanParameters:
            if status.isSuccess {
                scanWork.remove(.parameters)
            } else {
                if disallowed { isScanning = true }
                scanWork = .all
            }
        case .scanEnable:
            if status.isSuccess || disallowed {
                isScanning = true
                failed = false
            } else {
                scanWork = .all
            }
        case .createConnection:
            // Command Status 0: the attempt runs until LE Connection Complete or the timeout;
            // a refusal ends it (below).
            break
        case .cancelConnection:
            // 0x0C: nothing left to cancel; LE Connection Complete is on its way or the
            // cancelling deadline ends the attempt.
            failed = failed && !disallowed
        }

        if failed {
            actions.append(.commandFailed(opcode, status))
            if step == .createConnection, disallowed, createdWhileScanning, case .creating(let attempt) = initiating {
                // It cannot initiate while scanning after all: from now on scanning stops for
                // each attempt, and this one is made again that way (within its deadline).
                initiatingNeedsScanningOff = true
                initiating = .idle
                connectQueue.insert(attempt, at: 0)
            } else if step == .createConnection {
                if let peer = initiatingPeer { endAttempt(peer, status: status, into: &actions) }
            } else if step != .cancelConnection {
                retryAt = now + backoff
                backoff = min(backoff * 2, configuration.retryDelay * 64)
            }
        } else if status.isSuccess {
            backoff = configuration.retryDelay
        }
        reconcile(now: now, into: &actions)
    }
}
