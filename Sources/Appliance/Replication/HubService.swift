import Foundation
import Replication
import VenueDiary

/// The venue hub (`venue-beacon hub`): takes every node's visit batches from the broker,
/// commits them to the hub's store, and only then acknowledges them to the node (retained, at
/// `venue-beacon/ack/<node>`). Runs on the caller's thread until told to stop.
///
/// A batch that does not decode is dropped and counted (the node sends it again, and a node that
/// keeps sending garbage shows in the counts); a commit that fails is not acknowledged, so the
/// node sends it again.
public final class HubService {
    public struct Counts: Sendable, Equatable {
        public var batches = 0
        public var visits = 0
        public var malformed = 0
        public var failedCommits = 0
    }

    private let store: HubStore
    private let session: MQTTSession
    private let recordingDays: Int?
    private let log: (String) -> Void
    public private(set) var counts = Counts()
    private var connected = false
    private var ready = false
    private var reconnectDelay: Double = 1
    private var nextConnect: Double = 0
    private var lastPurge: Double = -.infinity

    public init(
        store: HubStore, broker: BrokerAddress, username: String, password: String?, caFile: String?,
        recordingDays: Int?, log: @escaping (String) -> Void
    ) throws {
        self.store = store
        self.recordingDays = recordingDays
        self.log = log
        do {
            session = try MQTTSession(
                MQTTSession.Options(
                    host: broker.host, port: broker.port, caFile: caFile, clientID: "venue-beacon-hub", username: username,
                    password: password))
        } catch {
            throw NodeReplicator.Refusal.login(username: username, reason: error.description)
        }
    }

    /// Runs until `stop()`; `onReady` is called once, when the subscriptions are in place.
    /// Returns a refusal of the login (retrying cannot help), or nil when stopped.
    public func run(until stop: () -> Bool, onReady: () -> Void) -> NodeReplicator.Refusal? {
        while !stop() {
            let now = Date().timeIntervalSince1970
            if now - lastPurge >= 3600 { purge(now: now) }
            if !connected {
                if now < nextConnect {
                    Thread.sleep(forTimeInterval: min(0.5, nextConnect - now))
                    continue
                }
                do {
                    try session.connect()
                    connected = true
                } catch {
                    log("cannot reach the broker: \(error.description); trying again in \(Int(reconnectDelay)) s")
                    scheduleReconnect(now: now)
                    continue
                }
            }
            let events: [MQTTSession.Event]
            do {
                events = try session.poll(timeout: 0.5)
            } catch {
                log(error.description)
                connected = false
                scheduleReconnect(now: now)
                continue
            }
            for event in events {
                switch event {
                case .connected(let reason):
                    guard reason == 0 else {
                        return .login(username: session.options.username, reason: MQTTSession.reason(reason))
                    }
                    reconnectDelay = 1
                    do {
                        _ = try session.subscribe(ReplicationTopic.allVisits)
                        _ = try session.subscribe(ReplicationTopic.allStatus)
                    } catch {
                        log(error.description)
                    }
                case .subscribed:
                    if !ready {
                        ready = true
                        onReady()
                    }
                case .disconnected(let reason):
                    log("the broker closed the connection: \(MQTTSession.reason(reason))")
                    connected = false
                    scheduleReconnect(now: now)
                case .published:
                    break
                case .message(let topic, let payload, _):
                    take(topic: topic, payload: payload)
                }
            }
        }
        if connected { session.disconnect() }
        return nil
    }

    private func take(topic: String, payload: [UInt8]) {
        guard let (node, kind) = ReplicationTopic.parse(topic) else { return }
        let now = Date().timeIntervalSince1970
        switch kind {
        case "visits":
            let batch: VisitBatch
            do {
                batch = try VisitBatch(decoding: payload)
            } catch {
                counts.malformed += 1
                log("dropped a malformed batch from node \(node): \(error)")
                return
            }
            let acked: Int64
            do {
                // Past retention at the hub (a node's recording_days may be longer): acknowledged, not kept.
                let expiredBefore = recordingDays.map { now - Double($0) * 86_400 }
                acked = try store.commit(
                    node: node, diary: batch.diary, prev: batch.prev, visits: batch.visits, now: now, expiredBefore: expiredBefore)
            } catch {
                counts.failedCommits += 1
                log("cannot commit a batch from node \(node): \(error)")
                return
            }
            counts.batches += 1
            counts.visits += batch.visits.count
            do {
                _ = try session.publish(ReplicationTopic.ack(node), HubAck(diary: batch.diary, acked: acked).encoded(), retain: true)
            } catch {
                log(error.description)
            }
        case "status":
            guard let status = try? NodeHealth(decoding: payload) else {
                counts.malformed += 1
                return
            }
            do {
                try store.recordStatus(node: node, online: status.online, clockSynchronised: status.clockSynchronised, now: now)
            } catch {
                log("cannot record the status of node \(node): \(error)")
            }
        default:
            break
        }
    }

    private func purge(now: Double) {
        lastPurge = now
        do {
            let deleted = try store.purge(now: now, recordingDays: recordingDays)
            if deleted > 0 { log("retention: deleted \(deleted) visits past recording_days") }
        } catch {
            log("retention failed: \(error)")
        }
    }

    private func scheduleReconnect(now: Double) {
        nextConnect = now + reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, 30)
    }
}
