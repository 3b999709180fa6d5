extension LinkManager {
    /// Connection attempts as central, as the initiating half of Zephyr's `conn.c`: the queue of
    /// attempts, the one running, and whether scanning must stop for each. Attempts run one at a
    /// time; each has one deadline (``Attempt``): a queued attempt past it fails without
    /// reaching the controller, a running one is cancelled (LE Create Connection Cancel) and
    /// ends with LE Connection Complete, or `commandTimeout` after the cancel if none comes.
    /// Its methods return what to send or which attempts ended; ``LinkManager`` reports them.
    struct Initiator: Sendable {
        enum State: Sendable {
            case idle
            /// LE Create Connection went out (`whileScanning`: with scanning on).
            case creating(Attempt, whileScanning: Bool)
            /// The attempt's deadline passed and LE Create Connection Cancel went out; `answerBy`
            /// bounds the wait for the controller's LE Connection Complete.
            case cancelling(Peer, answerBy: ContinuousClock.Instant)
        }

        /// Whether scanning may stay on while the controller initiates.
        enum Scanning: Sendable {
            /// If the controller's LE Supported States list the combination.
            case asSupportedStatesSay
            /// The controller refused LE Create Connection while scanning (0x0C), whatever its
            /// states said: from then on scanning stops for each attempt (until the process ends).
            case offForEachAttempt
        }

        /// What to do next about the queue (see ``next(freeLinks:advertisingTakesConnections:isScanning:scansWhileInitiating:)``).
        enum Step: Sendable {
            /// Nothing to start now.
            case none
            /// Every link is taken: these queued attempts fail (0x09).
            case refused([Attempt])
            /// The next attempt needs scanning off first.
            case stopScanning
            /// Send this LE Create Connection.
            case create(RadioCommand)
        }

        private(set) var state = State.idle
        private(set) var queue: [Attempt] = []
        private(set) var scanning = Scanning.asSupportedStatesSay
        private let configuration: Configuration

        init(configuration: Configuration) {
            self.configuration = configuration
        }

        /// True while an attempt is being made or cancelled.
        var isActive: Bool {
            if case .idle = state { return false }
            return true
        }

        /// The peer of the running (or cancelling) attempt.
        var peer: Peer? {
            switch state {
            case .idle: return nil
            case .creating(let attempt, _): return attempt.peer
            case .cancelling(let peer, _): return peer
            }
        }

        /// Attempts queued or running: each may take a link.
        var attemptCount: Int { queue.count + (isActive ? 1 : 0) }

        /// An attempt is running or about to start.
        var hasAttempt: Bool { isActive || !queue.isEmpty }

        /// The earliest deadline of the running and queued attempts (or of the cancel's answer).
        var nextDeadline: ContinuousClock.Instant? {
            var earliest: ContinuousClock.Instant?
            switch state {
            case .idle: break
            case .creating(let attempt, _): earliest = attempt.deadline
            case .cancelling(_, let answerBy): earliest = answerBy
            }
            for attempt in queue { earliest.lower(to: attempt.deadline) }
            return earliest
        }

        /// Whether an attempt to this peer is queued or running.
        func isConnecting(to peer: Peer) -> Bool {
            queue.contains(where: { $0.peer == peer }) || self.peer == peer
        }

        mutating func enqueue(_ attempt: Attempt) {
            queue.append(attempt)
        }

        /// Ends every attempt (the controller was reset): the running one first, then the queue.
        /// How scanning goes with initiating is kept: it is the controller's.
        mutating func removeAll() -> [Peer] {
            let peers = (peer.map { [$0] } ?? []) + queue.map(\.peer)
            queue.removeAll()
            state = .idle
            return peers
        }

        /// Removes and returns the queued attempts whose deadline passed before their turn.
        mutating func expireQueued(now: ContinuousClock.Instant) -> [Attempt] {
            guard queue.contains(where: { now >= $0.deadline }) else { return [] }
            let expired = queue.filter { now >= $0.deadline }
            queue.removeAll { now >= $0.deadline }
            return expired
        }

        /// LE Create Connection Cancel, if the running attempt's deadline passed and its LE Create
        /// Connection has been answered (`createInFlight` false).
        mutating func cancelIfDue(now: ContinuousClock.Instant, createInFlight: Bool) -> RadioCommand? {
            guard case .creating(let attempt, _) = state, now >= attempt.deadline, !createInFlight else { return nil }
            state = .cancelling(attempt.peer, answerBy: now + configuration.commandTimeout)
            return RadioCommand(LECreateConnectionCancel(), .cancelConnection, exclusive: false)
        }

        /// The cancelled attempt's peer if no LE Connection Complete came in time: the attempt
        /// is over all the same (0x08).
        mutating func giveUpIfUnanswered(now: ContinuousClock.Instant) -> Peer? {
            guard case .cancelling(let peer, let answerBy) = state, now >= answerBy else { return nil }
            state = .idle
            return peer
        }

        /// What to do about the queue while no attempt runs. `freeLinks`: links left under the
        /// cap, counting the links being refused.
        mutating func next(freeLinks: Int, advertisingTakesConnections: Bool, isScanning: Bool, scansWhileInitiating: Bool) -> Step {
            guard !isActive, !queue.isEmpty else { return .none }
            if freeLinks <= 0 {
                let refused = queue
                queue.removeAll()
                return .refused(refused)
            }
            if freeLinks <= 1, advertisingTakesConnections {
                // This attempt may fill the last link: first advertising stops taking connections
                // (the advertising step), or a peer could take that link while we initiate.
                return .none
            }
            if isScanning, !scansWhileInitiating { return .stopScanning }
            let attempt = queue.removeFirst()
            state = .creating(attempt, whileScanning: isScanning)
            let command = LECreateConnection(
                peerAddress: attempt.peer.address, peerAddressType: attempt.peer.type, ownAddressType: configuration.ownAddressType,
                scanInterval: configuration.initiatorScanInterval, scanWindow: configuration.initiatorScanWindow,
                connection: configuration.connectionParameters)
            return .create(RadioCommand(command, .createConnection))
        }

        /// The controller refused LE Create Connection with `status`. Returns the peer whose
        /// attempt is over, or nil when the attempt was put back to be made again with scanning
        /// off (0x0C while scanning: the controller cannot do both, whatever its states said).
        mutating func createRefused(status: HCIStatus) -> Peer? {
            if status == .commandDisallowed, case .creating(let attempt, whileScanning: true) = state {
                scanning = .offForEachAttempt
                state = .idle
                queue.insert(attempt, at: 0)
                return nil
            }
            return end()
        }

        /// LE Connection Complete with an error for our attempt: its peer and the status to
        /// report (0x08 when it answers our cancel), or nil if no attempt runs.
        mutating func failed(status: HCIStatus) -> (peer: Peer, status: HCIStatus)? {
            switch state {
            case .idle:
                return nil
            case .cancelling(let peer, _):
                // 0x02 answers the cancel sent at the attempt's deadline.
                state = .idle
                return (peer, .connectionTimeout)
            case .creating(let attempt, _):
                state = .idle
                return (attempt.peer, status)
            }
        }

        /// Our attempt's link came up (even while the cancel was on its way).
        mutating func connected() {
            state = .idle
        }

        /// Ends the running attempt; returns its peer.
        private mutating func end() -> Peer? {
            let peer = peer
            state = .idle
            return peer
        }
    }
}
