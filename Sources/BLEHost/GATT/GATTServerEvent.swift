/// A write from a peer to one of the application's characteristics. The same value goes to the
/// validation hook (before the write is accepted) and, once accepted, out as an event.
public struct GATTWrite: Hashable, Sendable {
    /// The link (HCI connection handle) the write came from.
    public var link: UInt16
    public var characteristic: GATTCharacteristic
    /// The whole value (for long writes: assembled from all prepared parts).
    public var value: [UInt8]
    /// Write Request or Execute Write (true), or Write Command (false).
    public var withResponse: Bool
    /// Who wrote: the peer of the link. The host sets it on every write it reports (a GATT
    /// server knows only its link's handle), so the application needs no table of links.
    public var peerAddress: BluetoothAddress?
    public var peerAddressType: AddressType?
    /// What the application's ``GATTWriteValidator`` decoded from the value while checking it
    /// (the Herald node's signal write), so the value is decoded once, on the host's thread, and
    /// the application takes the result from the event. Not part of equality.
    public var decoded: (any Sendable)?

    public init(
        link: UInt16, characteristic: GATTCharacteristic, value: [UInt8], withResponse: Bool, peerAddress: BluetoothAddress? = nil,
        peerAddressType: AddressType? = nil
    ) {
        self.link = link
        self.characteristic = characteristic
        self.value = value
        self.withResponse = withResponse
        self.peerAddress = peerAddress
        self.peerAddressType = peerAddressType
    }
}

extension GATTWrite {
    public static func == (a: GATTWrite, b: GATTWrite) -> Bool {
        a.link == b.link && a.characteristic == b.characteristic && a.value == b.value && a.withResponse == b.withResponse
            && a.peerAddress == b.peerAddress && a.peerAddressType == b.peerAddressType
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(link)
        hasher.combine(characteristic)
        hasher.combine(value)
        hasher.combine(withResponse)
        hasher.combine(peerAddress)
        hasher.combine(peerAddressType)
    }
}

/// A client on `link` changed its CCCD for `characteristic`.
public struct GATTSubscription: Hashable, Sendable {
    public var link: UInt16
    public var characteristic: GATTCharacteristic
    public var configuration: GATTClientConfiguration
}

/// What the server tells the application after handling a request or command.
public enum GATTServerEvent: Hashable, Sendable {
    case write(GATTWrite)
    /// The validator refused a write with this ATT error (answered to a Write Request, dropped
    /// for a Write Command); nothing changed.
    case writeRefused(GATTWrite, ATTErrorCode)
    case subscriptionChanged(GATTSubscription)
}

/// The synchronous hook that sees every write to an application characteristic before it is
/// accepted: return nil to accept, or the ATT error to answer (the Herald node answers a
/// malformed signal write with ``ATTErrorCode/invalidAttributeValueLength``). For a Write
/// Command a rejected write is dropped silently.
///
/// The hook may set ``GATTWrite/decoded`` to what it decoded; the event carries it.
public typealias GATTWriteValidator = (inout GATTWrite) -> ATTErrorCode?

/// The host engine's write hook (``HostConfiguration/validateWrite``): a ``GATTWriteValidator``
/// told the engine's time of the write as well, so a rate limit needs no clock of its own.
public typealias TimedGATTWriteValidator = @Sendable (inout GATTWrite, _ now: ContinuousClock.Instant) -> ATTErrorCode?
