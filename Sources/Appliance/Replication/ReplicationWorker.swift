import BLETransport
import Foundation
import Logging
import Synchronization
import VenueDiary

/// Replication inside `venue-beacon run`: a ``NodeReplicator`` on a thread of its own, started
/// once the service has opened the diary and stopped (saying offline to the hub) when the
/// service stops. The radio and the diary never wait for it: the diary is the outbox.
public final class ReplicationWorker: Sendable {
    private struct State {
        var started = false
        var stopping = false
        var stopped = false
        var backlog: Int?
    }

    private let settings: ReplicationSettings
    private let venue: VenueIdentity
    private let diaryPath: String
    private let clockSynchronised: @Sendable () -> Bool
    private let logger: Logger
    private let state = Mutex(State())

    public init(
        settings: ReplicationSettings, venue: VenueIdentity, diaryPath: String, clockSynchronised: @escaping @Sendable () -> Bool,
        logger: Logger
    ) {
        self.settings = settings
        self.venue = venue
        self.diaryPath = diaryPath
        self.clockSynchronised = clockSynchronised
        self.logger = logger
    }

    /// Visits the hub has not acknowledged, as last counted (about once a minute); nil before.
    public var backlog: Int? { state.withLock { $0.backlog } }

    /// Starts the thread (once; later calls do nothing).
    public func start() {
        guard state.withLock({ s in
            defer { s.started = true }
            return !s.started
        }) else { return }
        let settings = settings, venue = venue, diaryPath = diaryPath, logger = logger, clock = clockSynchronised
        DedicatedThread.start(name: "replication") { [self] in
            defer { state.withLock { $0.stopped = true } }
            let replicator: NodeReplicator
            do {
                replicator = try NodeReplicator(
                    settings: settings, store: try DiaryStore(path: diaryPath), publishesStatus: true, clockSynchronised: { clock() },
                    venue: venue)
            } catch {
                logger.error("replication to the venue hub is off for this run: \(error)")
                return
            }
            logger.notice("replicating to the venue hub at \(settings.broker) as node \(settings.node)")
            let refusal = replicator.run(until: { state.withLock { $0.stopping } }) { backlog in
                state.withLock { $0.backlog = backlog }
            }
            if let refusal { logger.error("replication to the venue hub stopped: \(refusal)") }
        }
    }

    /// Stops the thread and waits (up to 5 s) for it to say offline and leave.
    public func stop() {
        let started = state.withLock { s in
            s.stopping = true
            return s.started
        }
        guard started else { return }
        for _ in 0..<500 where !state.withLock({ $0.stopped }) { usleep(10_000) }
    }
}
