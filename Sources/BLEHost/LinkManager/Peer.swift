extension LinkManager {
    /// A peer to connect to, with the address type from its advertising report.
    struct Peer: Hashable, Sendable {
        var address: BluetoothAddress
        var type: AddressType
    }
}
