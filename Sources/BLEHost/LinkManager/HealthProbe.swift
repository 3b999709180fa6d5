extension LinkManager {
    /// The controller's health: after `silence` without any event, it returns a harmless
    /// command (Read Local Version) to probe the controller with. Only a command unanswered
    /// within the command timeout asks for a reset (the command queue says so); silence is no
    /// fault.
    struct HealthProbe: Sendable {
        enum State: Sendable {
            /// No controller (before start, after a reset was asked for).
            case stopped
            /// Waiting for the silence to be long enough; `lastActivity`: the last event.
            case listening(lastActivity: ContinuousClock.Instant)
            /// The probe is out.
            case probing(lastActivity: ContinuousClock.Instant)
        }

        let silence: Duration
        private(set) var state = State.stopped

        init(silence: Duration) {
            self.silence = silence
        }

        /// An event came from the controller (or it was just started or became ready).
        mutating func heard(at now: ContinuousClock.Instant) {
            if case .probing = state {
                state = .probing(lastActivity: now)
            } else {
                state = .listening(lastActivity: now)
            }
        }

        mutating func stop() {
            state = .stopped
        }

        /// When to probe (nil: stopped, or a probe is out).
        var deadline: ContinuousClock.Instant? {
            guard case .listening(let last) = state else { return nil }
            return last + silence
        }

        /// The probe command if the silence has lasted long enough; the probe is then out.
        mutating func probeIfDue(now: ContinuousClock.Instant) -> HCICommandPacket? {
            guard case .listening(let last) = state, now - last >= silence else { return nil }
            state = .probing(lastActivity: last)
            return ReadLocalVersionInformation().commandPacket
        }

        /// The probe was answered (or failed without timing out).
        mutating func probeEnded() {
            if case .probing(let last) = state { state = .listening(lastActivity: last) }
        }
    }
}
