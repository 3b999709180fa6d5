import Sightings

/// Connections: the clock tick that times out, forgets and ranks the targets to connect to, the
/// starts that follow each free slot at once, and each session's steps.
extension SensorNode {
    /// Call about once a second: ends overdue sessions, forgets targets unseen for their clean
    /// interval, ranks the targets worth a connection (``ConnectionCandidate``) and starts
    /// connections within the quota (``ConnectionQueue``). Between ticks every link outcome that
    /// frees an attempt or a slot starts the next one from this ranking at once, so the node
    /// connects as fast as the controller takes attempts, not once a second.
    ///
    /// The tick looks only at what may be due (see ``TargetTable``): the sessions, the targets
    /// the table's forgetting queues say may be unseen for long enough, and the recently heard
    /// targets that may be due a connection. Walking the whole table each second cost more than
    /// the rest of the advert pipeline once it held many targets.
    public mutating func tick(now: Double, into actions: inout [NodeAction]) {
        // Decided before anything changes, as one pass over the table would: a target whose
        // session ends in this tick is neither forgotten nor ranked until the next.
        let withSession = table.sessions.keys.sorted()
        let forgotten = table.forgetUnseen(now: now)
        counters.targetsForgotten += forgotten.count
        for target in forgotten { actions.append(.event(.delete(target, time: now))) }
        var candidates = [ConnectionCandidate]()
        candidates.reserveCapacity(table.recentCount)
        // The walk modifies the table in place, so it may not touch `self`: it gets copies.
        let configuration = configuration, recent = recentIPhonePayloads
        table.forEachRecent(now: now) { record in
            if let candidate = Self.dueCandidate(record, now: now, configuration: configuration, recentIPhonePayloads: recent) {
                candidates.append(candidate)
            }
        }
        for id in withSession { expire(id, now: now, into: &actions) }
        if recentIPhonePayloads.values.contains(where: { now - $0.seen > configuration.payloadSharingExpiry }) {
            recentIPhonePayloads = recentIPhonePayloads.filter { now - $0.value.seen <= configuration.payloadSharingExpiry }
        }
        candidates.sort()
        connectQueue.rank(candidates)
        refused = false
        startConnections(now: now, into: &actions)
    }

    /// Starts connections from the last tick's ranking while the quota and the attempt limit
    /// allow. A target ranked at the tick is checked again: it may have been read, backed off or
    /// gone quiet since.
    mutating func startConnections(now: Double, into actions: inout [NodeAction]) {
        guard !refused, now >= nextAttemptAt else { return }
        while sessions < configuration.concurrentConnectionQuota, attempts < configuration.concurrentConnectionAttempts,
            let id = connectQueue.take()
        {
            guard table.sessions[id] == nil, let record = table[id], connectionCandidate(record, now: now) != nil else { continue }
            // With others waiting, an address that does not answer within a few advertising
            // intervals has rotated or left: the controller is worth more to the next one.
            var timeout = configuration.connectionAttemptTimeout
            if !connectQueue.isEmpty { timeout = min(timeout, configuration.crowdedConnectionAttemptTimeout) }
            table.sessions[id] = TargetRecord.Session(phase: .connecting, started: now, attemptTimeout: timeout)
            sessions += 1
            attempts += 1
            counters.connectionsStarted += 1
            actions.append(.connect(record.target))
        }
    }

    /// How long the host may try to open the connection the node just asked for
    /// (``NodeAction/connect(_:)``): the attempt's one deadline, kept by the host, which reports
    /// `.connectTimedOut` when it passes. The node keeps no timer of its own for it.
    public func attemptTimeout(of id: TargetID) -> Double? {
        guard let session = table.sessions[id], session.phase == .connecting else { return nil }
        return session.attemptTimeout
    }

    /// Why and how urgently the node would connect to a target now, or nil.
    func connectionCandidate(_ record: borrowing TargetRecord, now: Double) -> ConnectionCandidate? {
        Self.connectionCandidate(record, now: now, configuration: configuration, recentIPhonePayloads: recentIPhonePayloads)
    }

    static func connectionCandidate(
        _ record: borrowing TargetRecord, now: Double, configuration: NodeConfiguration, recentIPhonePayloads: [TargetID: RecentPayload]
    ) -> ConnectionCandidate? {
        guard record.mayConnect(configuration), now - record.lastSeen <= configuration.connectRecency else { return nil }
        return dueCandidate(record, now: now, configuration: configuration, recentIPhonePayloads: recentIPhonePayloads)
    }

    /// ``connectionCandidate(_:now:configuration:recentIPhonePayloads:)`` for a target known to
    /// be able to connect and heard within the recency (what ``TargetTable/forEachRecent(now:_:)``
    /// has just checked for each target it visits).
    static func dueCandidate(
        _ record: borrowing TargetRecord, now: Double, configuration: NodeConfiguration, recentIPhonePayloads: [TargetID: RecentPayload]
    ) -> ConnectionCandidate? {
        guard now >= record.nextAttemptAt else { return nil }
        let id = record.target.id
        guard let readAt = record.payloadReadAt, record.payload != nil else {
            return ConnectionCandidate(reason: .firstRead, since: record.firstSeen, id: id)
        }
        if let interval = configuration.payloadUpdateInterval, now - readAt >= interval {
            return ConnectionCandidate(reason: .reread, since: readAt, id: id)
        }
        if sharingDue(record, now: now, configuration: configuration, recentIPhonePayloads: recentIPhonePayloads) {
            return ConnectionCandidate(reason: .share, since: record.lastSharedAt ?? record.firstSeen, id: id)
        }
        return nil
    }

    func needsRead(_ record: TargetRecord, now: Double) -> Bool {
        guard let readAt = record.payloadReadAt, record.payload != nil else { return true }
        guard let interval = configuration.payloadUpdateInterval else { return false }
        return now - readAt >= interval
    }

    private mutating func expire(_ id: TargetID, now: Double, into actions: inout [NodeAction]) {
        guard let session = table.sessions[id] else { return }
        let overdue: Bool
        switch session.phase {
        case .connecting:
            return  // the host's deadline ends it (`.connectTimedOut`)
        case .disconnecting:
            // The runtime never said the link went down: free the slot anyway.
            if now - session.started >= configuration.connectionAttemptTimeout + configuration.connectionSessionTimeout {
                end(id, now: now)
            }
            return
        case .discovering, .reading, .sharing:
            overdue = now - (session.connectedAt ?? session.started) >= configuration.connectionSessionTimeout
        }
        guard overdue, let target = table[id]?.target else { return }
        counters.connectionTimeouts += 1
        end(id, now: now, failed: true)
        actions.append(.disconnect(target))
    }

    /// Ends a session and frees its slot; a failure backs the target off.
    private mutating func end(_ id: TargetID, now: Double, failed: Bool = false) {
        guard let session = table.sessions[id] else { return }
        if session.phase == .connecting { attemptEnded(started: session.started, now: now) }
        sessions -= 1
        table.sessions[id] = nil
        if failed || !session.succeeded {
            counters.connectionFailures += 1
            let configuration = configuration
            table.update(id) { $0.recordFailure(now: now, configuration: configuration) }
        } else {
            table.update(id) { record in
                record.failures = 0
                record.nextAttemptAt = 0
            }
        }
    }

    /// What happened on a connection the node asked for; returns the next step in `actions`,
    /// and the next connections when this one freed an attempt or a slot.
    public mutating func link(_ event: LinkEvent, target id: TargetID, now: Double, into actions: inout [NodeAction]) {
        step(event, target: id, now: now, into: &actions)
        startConnections(now: now, into: &actions)
    }

    private mutating func step(_ event: LinkEvent, target id: TargetID, now: Double, into actions: inout [NodeAction]) {
        guard var session = table.sessions[id], let record = table[id] else {
            counters.staleLinkEvents += 1
            return
        }
        let target = record.target
        switch event {
        case .connected:
            guard session.phase == .connecting else { return }
            attemptEnded(started: session.started, now: now)
            session.phase = .discovering
            session.connectedAt = now
            table.sessions[id] = session
            actions.append(.discover(target, openTrace: record.source == .openTrace))

        case .connectFailed:
            end(id, now: now, failed: true)

        case .connectTimedOut:
            guard session.phase == .connecting else { return }
            counters.connectionTimeouts += 1
            end(id, now: now, failed: true)

        case .connectRefused:
            // No link free: neither the target's fault nor worth trying the next one now.
            guard session.phase == .connecting else { return }
            attempts -= 1
            sessions -= 1
            table.sessions[id] = nil
            counters.connectionsRefused += 1
            refused = true

        case .discovered(let services):
            if record.source == .openTrace, services.openTrace {
                step(id, to: .reading, now: now, into: &actions, .readPayload(target, .openTrace))
            } else if services.heraldPayload {
                table.update(id) { $0.signal = services.signal }
                next(after: id, now: now, into: &actions)
            } else {
                if record.source == .apple {
                    // An Apple device without the Herald service: not a Herald iPhone; leave it.
                    counters.notHerald += 1
                    table.update(id) { record in
                        record.notHerald = true
                        record.earlier = []
                    }
                    table.sessions[id]?.succeeded = true
                }
                disconnect(id, into: &actions)
            }

        case .payloadRead(let bytes):
            guard session.phase == .reading, !bytes.isEmpty else {
                disconnect(id, into: &actions)
                return
            }
            let kind: PayloadKind = record.source == .openTrace ? .opentrace : .herald
            table.sessions[id]?.succeeded = true
            learn(SensorPayload(kind: kind, bytes: bytes), for: id, now: now, into: &actions)
            next(after: id, now: now, into: &actions)

        case .readFailed:
            disconnect(id, into: &actions)

        case .signalWritten:
            guard session.phase == .sharing else { return }
            counters.sharesWritten += 1
            table.update(id) { record in
                record.lastSharedAt = now
                record.shareRound += 1
            }
            table.sessions[id]?.succeeded = true
            disconnect(id, into: &actions)

        case .disconnected:
            end(id, now: now)
            refused = false
        }
    }

    /// An attempt is over (the link is up, or it failed or timed out): scanning gets its share
    /// before the next one, and always at least `minimumScanBetweenAttempts` (back to back
    /// attempts, a link opening as the next attempt starts, confused btvirt and its phones).
    private mutating func attemptEnded(started: Double, now: Double) {
        attempts -= 1
        var gap = configuration.minimumScanBetweenAttempts
        if !controllerScansWhileConnecting {
            let share = min(max(configuration.connectingShare, 0.01), 1)
            gap = min(max((now - started) * (1 - share) / share, gap), configuration.maximumScanBetweenAttempts)
        }
        nextAttemptAt = max(nextAttemptAt, now + gap)
    }

    /// After discovery or a read: read if the payload is still needed, share if due, else leave.
    private mutating func next(after id: TargetID, now: Double, into actions: inout [NodeAction]) {
        guard let record = table[id] else { return }
        if table.sessions[id]?.phase == .discovering, needsRead(record, now: now) {
            step(id, to: .reading, now: now, into: &actions, .readPayload(record.target, .herald))
            return
        }
        if table.sessions[id]?.phase == .discovering { table.sessions[id]?.succeeded = true }
        if sharingDue(record, now: now), let data = sharingData(for: record, now: now) {
            step(id, to: .sharing, now: now, into: &actions, .writeSignal(record.target, .payloadSharing(rssi: Int16(clamping: record.lastRSSI ?? 0), payloads: data)))
            return
        }
        disconnect(id, into: &actions)
    }

    private mutating func step(_ id: TargetID, to phase: TargetRecord.Phase, now: Double, into actions: inout [NodeAction], _ action: NodeAction) {
        table.sessions[id]?.phase = phase
        actions.append(action)
    }

    private mutating func disconnect(_ id: TargetID, into actions: inout [NodeAction]) {
        guard let target = table[id]?.target else { return }
        table.sessions[id]?.phase = .disconnecting
        actions.append(.disconnect(target))
    }
}
