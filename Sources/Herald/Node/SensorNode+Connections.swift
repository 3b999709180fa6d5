/// Connections: the clock tick that starts, times out and forgets, and each session's steps.
extension SensorNode {
    /// Call about once a second: ends overdue sessions, forgets targets unseen for the clean
    /// interval, and starts connections within the quota, most useful first.
    public mutating func tick(now: Double, into actions: inout [NodeAction]) {
        var forget = [TargetID]()
        var candidates = [(priority: Int, since: Double, id: TargetID)]()
        for (id, record) in table.records {
            if let session = record.session {
                expire(session, of: id, now: now, into: &actions)
            } else if now - record.lastSeen >= configuration.peripheralCleanInterval {
                forget.append(id)
            } else if let priority = connectionPriority(record, now: now) {
                candidates.append((priority, record.firstSeen, id))
            }
        }
        for id in forget { table.remove(id) }
        counters.targetsForgotten += forget.count
        recentIPhonePayloads = recentIPhonePayloads.filter { now - $0.value.seen <= configuration.payloadSharingExpiry }

        guard !candidates.isEmpty else { return }
        candidates.sort { ($0.priority, $0.since, $0.id) < ($1.priority, $1.since, $1.id) }
        for candidate in candidates {
            guard sessions < configuration.concurrentConnectionQuota, attempts < configuration.concurrentConnectionAttempts else { break }
            guard let target = table[candidate.id]?.target else { continue }
            table[candidate.id]?.session = TargetRecord.Session(phase: .connecting, started: now)
            sessions += 1
            attempts += 1
            counters.connectionsStarted += 1
            actions.append(.connect(target))
        }
    }

    /// Why the node would connect to a target now (lower is more urgent), or nil.
    func connectionPriority(_ record: TargetRecord, now: Double) -> Int? {
        guard record.connectable, !record.notHerald, !record.isVenueBeacon,
            now - record.lastSeen <= configuration.connectRecency,
            now >= record.nextAttemptAt,
            record.failures < configuration.maximumConnectionFailures
        else { return nil }
        let sourceRank: Int
        switch record.source {
        case .herald: sourceRank = 0
        case .openTrace: sourceRank = 1
        case .apple: sourceRank = 2
        case .advert, .writer: return nil
        }
        if needsRead(record, now: now) { return sourceRank }
        if sharingDue(record, now: now) { return 3 }
        return nil
    }

    func needsRead(_ record: TargetRecord, now: Double) -> Bool {
        guard let readAt = record.payloadReadAt, record.payload != nil else { return true }
        guard let interval = configuration.payloadUpdateInterval else { return false }
        return now - readAt >= interval
    }

    private mutating func expire(_ session: TargetRecord.Session, of id: TargetID, now: Double, into actions: inout [NodeAction]) {
        let overdue: Bool
        switch session.phase {
        case .connecting:
            overdue = now - session.started >= configuration.connectionAttemptTimeout
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
        guard let session = table[id]?.session else { return }
        if session.phase == .connecting { attempts -= 1 }
        sessions -= 1
        table[id]?.session = nil
        if failed || !session.succeeded {
            counters.connectionFailures += 1
            table[id]?.recordFailure(now: now, configuration: configuration)
        } else {
            table[id]?.failures = 0
            table[id]?.nextAttemptAt = 0
        }
    }

    /// What happened on a connection the node asked for; returns the next step in `actions`.
    public mutating func link(_ event: LinkEvent, target id: TargetID, now: Double, into actions: inout [NodeAction]) {
        guard let record = table[id], var session = record.session else {
            counters.staleLinkEvents += 1
            return
        }
        let target = record.target
        switch event {
        case .connected:
            guard session.phase == .connecting else { return }
            attempts -= 1
            session.phase = .discovering
            session.connectedAt = now
            table[id]?.session = session
            actions.append(.discover(target, openTrace: record.source == .openTrace))

        case .connectFailed:
            end(id, now: now, failed: true)

        case .discovered(let services):
            if record.source == .openTrace, services.openTrace {
                step(id, to: .reading, now: now, into: &actions, .readPayload(target, .openTrace))
            } else if services.heraldPayload {
                table[id]?.signal = services.signal
                next(after: id, now: now, into: &actions)
            } else {
                if record.source == .apple {
                    // An Apple device without the Herald service: not a Herald iPhone; leave it.
                    counters.notHerald += 1
                    table[id]?.notHerald = true
                    table[id]?.earlier = []
                    table[id]?.session?.succeeded = true
                }
                disconnect(id, into: &actions)
            }

        case .payloadRead(let bytes):
            guard session.phase == .reading, !bytes.isEmpty else {
                disconnect(id, into: &actions)
                return
            }
            let kind: SensorPayload.Kind = record.source == .openTrace ? .opentrace : .herald
            table[id]?.session?.succeeded = true
            learn(SensorPayload(kind: kind, bytes: bytes), for: id, now: now, into: &actions)
            next(after: id, now: now, into: &actions)

        case .readFailed:
            disconnect(id, into: &actions)

        case .signalWritten:
            guard session.phase == .sharing else { return }
            counters.sharesWritten += 1
            table[id]?.lastSharedAt = now
            table[id]?.shareRound += 1
            table[id]?.session?.succeeded = true
            disconnect(id, into: &actions)

        case .disconnected:
            end(id, now: now)
        }
    }

    /// After discovery or a read: read if the payload is still needed, share if due, else leave.
    private mutating func next(after id: TargetID, now: Double, into actions: inout [NodeAction]) {
        guard let record = table[id] else { return }
        if record.session?.phase == .discovering, needsRead(record, now: now) {
            step(id, to: .reading, now: now, into: &actions, .readPayload(record.target, .herald))
            return
        }
        if record.session?.phase == .discovering { table[id]?.session?.succeeded = true }
        if sharingDue(record, now: now), let data = sharingData(for: record, now: now) {
            step(id, to: .sharing, now: now, into: &actions, .writeSignal(record.target, .payloadSharing(rssi: Int16(clamping: record.lastRSSI ?? 0), payloads: data)))
            return
        }
        disconnect(id, into: &actions)
    }

    private mutating func step(_ id: TargetID, to phase: TargetRecord.Phase, now: Double, into actions: inout [NodeAction], _ action: NodeAction) {
        table[id]?.session?.phase = phase
        actions.append(action)
    }

    private mutating func disconnect(_ id: TargetID, into actions: inout [NodeAction]) {
        guard let target = table[id]?.target else { return }
        table[id]?.session?.phase = .disconnecting
        actions.append(.disconnect(target))
    }
}
