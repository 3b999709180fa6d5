import CMosquitto
import Foundation
import Replication
import VenueDiary

/// Sends a node's diary to the venue hub: ``ReplicationSender`` decides, this drives it with
/// the diary (the outbox) and an ``MQTTSession``, on the caller's thread.
///
/// `venue-beacon replicate` runs one ``pass(timeout:)``; the service runs ``run(until:)`` on a
/// thread of its own. Either way a visit counts as replicated only once the hub's
/// acknowledgement covers its change, and the acknowledgement is kept in the diary (at most
/// every ``ackSaveInterval`` seconds, and at the end) for `diary stats` and the next start.
public final class NodeReplicator {
    /// Why replication cannot go on with these settings; retrying does not help.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// The broker refused the login (CONNACK reason).
        case login(username: String, reason: String)
        /// The broker refused a publish (PUBACK 0x87: its ACL).
        case publish(node: String, username: String, reason: String)

        public var description: String {
            switch self {
            case .login(let username, let reason):
                "the broker refused the login '\(username)': \(reason); check [replication] username and password_file, and the broker's password file"
            case .publish(let node, let username, let reason):
                "the broker refused the visits of node '\(node)' from login '\(username)': \(reason); a node may publish only under its own login name ([replication] node = username), see the venue's ACL"
            }
        }
    }

    /// What a pass did.
    public struct Outcome: Sendable, Equatable {
        /// Visit states published (resends count again).
        public var sent = 0
        /// Visits the hub acknowledged during the pass.
        public var acknowledged = 0
        /// Visits still not acknowledged.
        public var pending = 0
        public var refusal: Refusal?
        /// The last reason the broker could not be reached, while it could not.
        public var unreachable: String?
        /// The broker took visits that no subscriber (no hub session) would ever read.
        public var noHubSubscribed = false
    }

    public static let ackSaveInterval: Double = 30

    let settings: ReplicationSettings
    let store: DiaryStore
    let diary: String
    private let session: MQTTSession
    private(set) var sender: ReplicationSender
    private let clockSynchronised: @Sendable () -> Bool?
    private let publishesStatus: Bool
    /// `[replication] home_assistant`: the venue the discovery names; nil: none.
    private let homeAssistantVenue: VenueIdentity?
    private var announced = false
    private var connected = false
    private var subscribed = false
    private var lastChange: Int64 = -1
    private var savedAck: Int64
    private var lastAckSave: Double = 0
    private var batchVisits: [Int32: Int] = [:]
    private var outcome = Outcome()
    private var lastStatus: Double = -.infinity
    private var reconnectDelay: Double = 1
    private var nextConnect: Double = 0

    /// - Parameters:
    ///   - publishesStatus: the service's session: a retained status (counts only), and a last will
    ///     saying offline. A by-hand pass publishes none.
    public init(
        settings: ReplicationSettings, store: DiaryStore, options: ReplicationSender.Options = .init(),
        publishesStatus: Bool = false, clockSynchronised: @escaping @Sendable () -> Bool? = { nil },
        venue: VenueIdentity? = nil
    ) throws {
        self.settings = settings
        self.store = store
        self.publishesStatus = publishesStatus
        homeAssistantVenue = publishesStatus && settings.homeAssistant ? venue : nil
        self.clockSynchronised = clockSynchronised
        diary = try store.diaryID()
        let kept = try store.replicationAck()
        let acked = kept?.diary == diary ? kept?.acked ?? 0 : 0
        savedAck = acked
        sender = ReplicationSender(diary: diary, acked: acked, options: options)
        let password: String?
        do {
            password = try settings.password()
        } catch {
            throw Refusal.login(username: settings.username, reason: "cannot read the password file: \(error)")
        }
        session = try MQTTSession(
            MQTTSession.Options(
                host: settings.broker.host, port: settings.broker.port, caFile: settings.caFile,
                clientID: "venue-beacon-\(settings.node)\(publishesStatus ? "" : "-replicate")",
                username: settings.username, password: password,
                will: publishesStatus ? (ReplicationTopic.status(settings.node), NodeHealth.offline.encoded()) : nil))
    }

    /// Visits not yet acknowledged by the hub.
    public func backlog() throws -> Int { try store.backlog(after: sender.acked) }

    /// Sends everything the hub has not acknowledged and waits for the acknowledgement, for at
    /// most `timeout` seconds. Stops early on a refusal.
    public func pass(timeout: Double) -> Outcome {
        let start = Date().timeIntervalSince1970
        let target = (try? store.lastChange()) ?? 0
        let before = (try? store.backlog(after: sender.acked)) ?? 0
        outcome = Outcome()
        while true {
            let now = Date().timeIntervalSince1970
            step(now: now, wait: 0.2)
            if outcome.refusal != nil { break }
            if sender.acked >= target || ((try? store.backlog(after: sender.acked, upTo: target)) ?? 1) == 0 { break }
            if now - start >= timeout { break }
        }
        finish(now: Date().timeIntervalSince1970)
        outcome.pending = (try? store.backlog(after: sender.acked, upTo: target)) ?? outcome.pending
        outcome.acknowledged = max(0, before - outcome.pending)
        return outcome
    }

    /// Replicates until `stop` says so, then says offline and leaves cleanly.
    /// `backlog` hears the number of visits not yet acknowledged, about once a minute.
    public func run(until stop: () -> Bool, backlog report: (Int) -> Void = { _ in }) -> Refusal? {
        outcome = Outcome()
        var lastReport = -Double.infinity
        while !stop() && outcome.refusal == nil {
            let now = Date().timeIntervalSince1970
            step(now: now, wait: 0.5)
            if now - lastReport >= 60, let count = try? backlog() {
                lastReport = now
                report(count)
            }
        }
        finish(now: Date().timeIntervalSince1970)
        return outcome.refusal
    }

    /// One turn: connect if due, run the network loop up to `wait` seconds, take in what
    /// happened, and send what the sender allows.
    func step(now: Double, wait: Double) {
        if !connected {
            guard now >= nextConnect else {
                Thread.sleep(forTimeInterval: min(wait, nextConnect - now))
                return
            }
            do {
                try session.connect()
                connected = true
                outcome.unreachable = nil
            } catch {
                outcome.unreachable = error.description
                scheduleReconnect(now: now)
                return
            }
        }
        let events: [MQTTSession.Event]
        do {
            events = try session.poll(timeout: wait)
        } catch {
            lost(error.description, now: now)
            return
        }
        for event in events { handle(event, now: Date().timeIntervalSince1970) }
        guard connected, subscribed else { return }
        let now = Date().timeIntervalSince1970
        if let change = try? store.lastChange(), change != lastChange {
            lastChange = change
            sender.diaryChanged()
        }
        sender.tick(now: now)
        sendBatches(now: now)
        if publishesStatus && now - lastStatus >= 60 { publishStatus(now: now) }
        saveAck(now: now, force: false)
    }

    private func handle(_ event: MQTTSession.Event, now: Double) {
        switch event {
        case .connected(let reason):
            guard reason == 0 else {
                outcome.refusal = .login(username: settings.username, reason: MQTTSession.reason(reason))
                return
            }
            reconnectDelay = 1
            do {
                _ = try session.subscribe(ReplicationTopic.ack(settings.node))
            } catch {
                lost(error.description, now: now)
            }
        case .subscribed:
            subscribed = true
            sender.connected(now: now)
            lastStatus = -.infinity
        case .disconnected(let reason):
            lost("the broker closed the connection: \(MQTTSession.reason(reason))", now: now)
        case .published(let mid, let reason):
            let visits = batchVisits.removeValue(forKey: mid)
            if reason == 0x87 || reason == 0x86 || reason == 0x8F || reason == 0x90 {
                if visits != nil {
                    outcome.refusal = .publish(node: settings.node, username: settings.username, reason: MQTTSession.reason(reason))
                }
            } else if reason == 0x10 {
                outcome.noHubSubscribed = true
            }
        case .message(let topic, let payload, _):
            guard topic == ReplicationTopic.ack(settings.node), let ack = try? HubAck(decoding: payload) else { return }
            sender.received(ack, now: now)
        }
    }

    private func sendBatches(now: Double) {
        while let after = sender.nextBatch() {
            let rows: [(change: Int64, visit: Visit)]
            do {
                rows = try store.changes(after: after, limit: sender.options.batchSize)
            } catch {
                return
            }
            guard !rows.isEmpty else {
                sender.sent(last: after, now: now)
                return
            }
            let batch = VisitBatch(diary: diary, prev: after, visits: rows.map { ReplicatedVisit(change: $0.change, visit: $0.visit) })
            do {
                let mid = try session.publish(ReplicationTopic.visits(settings.node), batch.encoded())
                batchVisits[mid] = rows.count
            } catch {
                lost(error.description, now: now)
                return
            }
            outcome.sent += rows.count
            sender.sent(last: batch.last, now: now)
        }
    }

    private func publishStatus(now: Double) {
        lastStatus = now
        let backlog = try? backlog()
        let midnight = Calendar.current.startOfDay(for: Date(timeIntervalSince1970: now)).timeIntervalSince1970
        let occupancy = try? store.occupancy(since: midnight)
        let status = NodeHealth(online: true, clockSynchronised: clockSynchronised(), backlog: backlog, present: occupancy?.present)
        _ = try? session.publish(ReplicationTopic.status(settings.node), status.encoded(), retain: true)
        guard let venue = homeAssistantVenue else { return }
        if !announced {
            for message in HomeAssistantDiscovery.configs(node: settings.node, venueCode: venue.code, venueName: venue.name) {
                _ = try? session.publish(message.topic, message.payload, retain: true)
            }
            announced = true
        }
        let state = HomeAssistantDiscovery.state(
            node: settings.node, present: occupancy?.present ?? 0, checkedInToday: occupancy?.checkedIn ?? 0, backlog: backlog ?? 0)
        _ = try? session.publish(state.topic, state.payload, retain: true)
    }

    private func lost(_ reason: String, now: Double) {
        connected = false
        announced = false
        subscribed = false
        batchVisits.removeAll()
        sender.disconnected()
        outcome.unreachable = reason
        scheduleReconnect(now: now)
    }

    private func scheduleReconnect(now: Double) {
        nextConnect = now + reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, publishesStatus ? 60 : 2)
    }

    private func saveAck(now: Double, force: Bool) {
        guard sender.acked != savedAck, force || now - lastAckSave >= Self.ackSaveInterval else { return }
        if (try? store.saveReplicationAck(ReplicationAck(diary: diary, acked: sender.acked, at: now))) != nil {
            savedAck = sender.acked
            lastAckSave = now
        }
    }

    private func finish(now: Double) {
        saveAck(now: now, force: true)
        if connected {
            if publishesStatus {
                _ = try? session.publish(ReplicationTopic.status(settings.node), NodeHealth.offline.encoded(), retain: true)
            }
            session.disconnect()
            connected = false
            subscribed = false
        }
    }
}
