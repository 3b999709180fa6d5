extension LinkManager {
    /// A peer to connect to, with the address type from its advertising report.
    struct Peer: Hashable, Sendable {
        var address: BluetoothAddress
        var type: AddressType
    }

    /// A connection attempt and the one deadline it has, from the caller's request: queued or
    /// running, it is given up then and reported as a connection timeout (0x08).
    struct Attempt: Sendable {
        var peer: Peer
        var deadline: ContinuousClock.Instant
    }
}
