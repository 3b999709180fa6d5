/// The earliest of several deadlines, as each state machine's `nextDeadline` gathers its own:
/// `earliest.lower(to: other)` keeps the sooner of the two, and nil means "none yet". Allocates
/// nothing: the host asks for its next deadline before every wait.
extension Optional where Wrapped == ContinuousClock.Instant {
    @inlinable
    public mutating func lower(to deadline: ContinuousClock.Instant?) {
        guard let deadline else { return }
        self = Swift.min(self ?? deadline, deadline)
    }
}
