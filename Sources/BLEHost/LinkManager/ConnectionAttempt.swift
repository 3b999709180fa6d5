extension LinkManager {
    /// A connection attempt and the one deadline it has, from the caller's request: queued or
    /// running, it is given up then and reported as a connection timeout (0x08).
    struct Attempt: Sendable {
        var peer: Peer
        var deadline: ContinuousClock.Instant
    }
}
