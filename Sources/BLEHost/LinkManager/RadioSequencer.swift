extension LinkManager {
    /// One radio command at a time, failures retried with back-off (`retryDelay` doubling to
    /// 64×), and the static random address (if any) before anything else after each init.
    /// ``LinkManager`` asks it whether a command may start, and tells it what was sent and how
    /// it ended.
    struct RadioSequencer: Sendable {
        let retryDelay: Duration
        let randomAddress: BluetoothAddress?
        /// The exclusive command outstanding.
        private(set) var busy: RadioStep?
        /// No command before this, after a failure.
        private(set) var retryAt: ContinuousClock.Instant?
        private var backoff: Duration
        private var randomAddressSet = false

        init(retryDelay: Duration, randomAddress: BluetoothAddress?) {
            self.retryDelay = retryDelay
            self.randomAddress = randomAddress
            backoff = retryDelay
        }

        /// The controller forgot everything (reset or closed).
        mutating func reset() {
            busy = nil
            retryAt = nil
            backoff = retryDelay
            randomAddressSet = false
        }

        /// Whether the next exclusive command may start now (none outstanding, no back-off).
        mutating func mayStart(now: ContinuousClock.Instant) -> Bool {
            guard busy == nil else { return false }
            if let retry = retryAt {
                guard now >= retry else { return false }
                retryAt = nil
            }
            return true
        }

        /// LE Set Random Address, while the configured address is not set.
        var addressCommand: RadioCommand? {
            guard let address = randomAddress, !randomAddressSet else { return nil }
            return RadioCommand(LESetRandomAddress(address: address), .setRandomAddress)
        }

        mutating func sent(_ command: RadioCommand) {
            if command.exclusive { busy = command.step }
        }

        /// A radio command ended (answered, refused or timed out; not cancelled).
        mutating func ended(_ step: RadioStep) {
            if busy == step { busy = nil }
        }

        /// LE Set Random Address ended; returns whether it failed.
        mutating func addressCompleted(status: HCIStatus) -> Bool {
            randomAddressSet = status.isSuccess
            return !status.isSuccess
        }

        /// A command failed: the next waits `backoff`, which doubles.
        mutating func backOff(now: ContinuousClock.Instant) {
            retryAt = now + backoff
            backoff = min(backoff * 2, retryDelay * 64)
        }

        /// A command succeeded: back-off starts again from `retryDelay`.
        mutating func succeeded() {
            backoff = retryDelay
        }
    }
}
