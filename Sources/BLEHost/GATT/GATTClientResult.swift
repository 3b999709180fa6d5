/// A primary service found on the peer.
public struct GATTDiscoveredService: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var startHandle: UInt16
    public var endHandle: UInt16

    public init(uuid: BluetoothUUID, startHandle: UInt16, endHandle: UInt16) {
        self.uuid = uuid
        self.startHandle = startHandle
        self.endHandle = endHandle
    }
}

/// A characteristic found on the peer (from its declaration).
public struct GATTDiscoveredCharacteristic: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var properties: GATTCharacteristicProperties
    public var declarationHandle: UInt16
    public var valueHandle: UInt16

    public init(uuid: BluetoothUUID, properties: GATTCharacteristicProperties, declarationHandle: UInt16, valueHandle: UInt16) {
        self.uuid = uuid
        self.properties = properties
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
    }
}

/// A descriptor (or any attribute) found by Find Information.
public struct GATTDiscoveredDescriptor: Hashable, Sendable {
    public var handle: UInt16
    public var uuid: BluetoothUUID

    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// What a successful client procedure yields.
public enum GATTClientResult: Hashable, Sendable {
    /// The ATT_MTU now in force.
    case mtu(Int)
    case services([GATTDiscoveredService])
    case characteristics([GATTDiscoveredCharacteristic])
    case descriptors([GATTDiscoveredDescriptor])
    /// A whole value (long values assembled from Read Blob parts).
    case value([UInt8])
    case written
}

/// Why a client procedure failed.
public enum GATTClientError: Error, Hashable, Sendable {
    /// The peer answered `request` on `handle` with an Error Response.
    case att(ATTErrorCode, request: ATTOpcode, handle: UInt16)
    case serviceNotFound(BluetoothUUID)
    case characteristicNotFound(BluetoothUUID)
    case descriptorNotFound(BluetoothUUID)
    /// The peer's response was malformed or made no sense for the procedure (wrong length,
    /// handles going backwards, a prepared write echoed wrongly).
    case invalidResponse(String)
    /// A value longer than ATT allows (512 bytes), or a Write Command longer than ATT_MTU − 3.
    case valueTooLong(Int)
    /// No response within the request timeout (ATT's 30 s unless the host was configured
    /// shorter); the link should be (and is being) disconnected.
    case timedOut
    /// The link closed before the procedure finished.
    case closed
}
