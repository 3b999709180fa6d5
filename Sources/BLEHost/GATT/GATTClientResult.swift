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

/// What a composite discovery (``GATTClientProcedure/discover(_:exchangingMTU:)``) found: the
/// ATT_MTU in force and, for each group of services it looked for, the one the peer has with its
/// characteristics, in the order asked.
public struct GATTDiscovery: Hashable, Sendable {
    public struct Service: Hashable, Sendable {
        public var service: GATTDiscoveredService
        public var characteristics: [GATTDiscoveredCharacteristic]

        public init(service: GATTDiscoveredService, characteristics: [GATTDiscoveredCharacteristic]) {
            self.service = service
            self.characteristics = characteristics
        }

        /// The value handle of the characteristic `uuid`, if the service has it.
        public func valueHandle(of uuid: BluetoothUUID) -> UInt16? {
            characteristics.first { $0.uuid == uuid }?.valueHandle
        }
    }

    public var mtu: Int
    public var services: [Service]

    public init(mtu: Int, services: [Service]) {
        self.mtu = mtu
        self.services = services
    }

    /// The service found among `uuids`, if any.
    public func service(_ uuids: BluetoothUUID...) -> Service? {
        services.first { uuids.contains($0.service.uuid) }
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
    /// A composite discovery's findings.
    case discovered(GATTDiscovery)
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
