/// An open LE link as the link manager knows it.
public struct LELink: Hashable, Sendable {
    public var handle: UInt16
    /// Central: we connected to the peer. Peripheral: the peer connected to our advertising.
    public var role: LERole
    public var peerAddress: BluetoothAddress
    public var peerAddressType: AddressType
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(
        handle: UInt16, role: LERole, peerAddress: BluetoothAddress, peerAddressType: AddressType, interval: UInt16,
        latency: UInt16, supervisionTimeout: UInt16
    ) {
        self.handle = handle
        self.role = role
        self.peerAddress = peerAddress
        self.peerAddressType = peerAddressType
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}
