/// The role of this controller on a link. Open.
public struct LERole: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// We initiated the link.
    public static let central = LERole(rawValue: 0x00)
    /// A peer connected to our advertising.
    public static let peripheral = LERole(rawValue: 0x01)

    public var description: String {
        switch rawValue {
        case 0: return "central"
        case 1: return "peripheral"
        default: return "role \(rawValue)"
        }
    }
}

/// LE Connection Complete (subevent 0x01) and LE Enhanced Connection Complete (0x0A).
/// With a non-zero status no link exists; 0x02 after LE Create Connection Cancel means the
/// attempt was cancelled.
public struct LEConnectionComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    public var role: LERole
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    /// Enhanced only: our and the peer's resolvable private addresses (zero if unused).
    public var localResolvablePrivateAddress: BluetoothAddress?
    public var peerResolvablePrivateAddress: BluetoothAddress?
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(
        status: HCIStatus, handle: UInt16, role: LERole, peerAddressType: AddressType, peerAddress: BluetoothAddress,
        interval: UInt16 = 0x0028, latency: UInt16 = 0, supervisionTimeout: UInt16 = 0x01F4, centralClockAccuracy: UInt8 = 0
    ) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    public init(parameters: ArraySlice<UInt8>, enhanced: Bool) throws(DecodeError) {
        var r = ByteReader(parameters)
        status = HCIStatus(rawValue: try r.readU8("Status"))
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        role = LERole(rawValue: try r.readU8("Role"))
        peerAddressType = AddressType(rawValue: try r.readU8("Peer_Address_Type"))
        peerAddress = try r.readAddress("Peer_Address")
        if enhanced {
            localResolvablePrivateAddress = try r.readAddress("Local_Resolvable_Private_Address")
            peerResolvablePrivateAddress = try r.readAddress("Peer_Resolvable_Private_Address")
        }
        interval = try r.readLE16("Connection_Interval")
        latency = try r.readLE16("Peripheral_Latency")
        supervisionTimeout = try r.readLE16("Supervision_Timeout")
        centralClockAccuracy = try r.readU8("Central_Clock_Accuracy")
    }
}

/// LE Connection Update Complete (subevent 0x03).
public struct LEConnectionUpdateComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        status = HCIStatus(rawValue: try r.readU8("Status"))
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        interval = try r.readLE16("Connection_Interval")
        latency = try r.readLE16("Peripheral_Latency")
        supervisionTimeout = try r.readLE16("Supervision_Timeout")
    }
}

/// LE Read Remote Features Complete (subevent 0x04).
public struct LEReadRemoteFeaturesComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    public var features: LEFeatures

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        status = HCIStatus(rawValue: try r.readU8("Status"))
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        features = LEFeatures(rawValue: try r.readLE64("LE_Features"))
    }
}

/// LE Long Term Key Request (subevent 0x05): the peer wants to encrypt with a stored key. This
/// host has none and answers with a negative reply.
public struct LELongTermKeyRequest: Hashable, Sendable {
    public var handle: UInt16
    public var randomNumber: UInt64
    public var encryptedDiversifier: UInt16

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        randomNumber = try r.readLE64("Random_Number")
        encryptedDiversifier = try r.readLE16("Encrypted_Diversifier")
    }
}

extension LEConnectionComplete {
    /// LE Connection Complete (subevent 0x01); the resolvable private addresses are not carried.
    public var packet: H4Packet {
        var p: [UInt8] = [status.rawValue]
        p.appendLE16(handle & 0x0FFF)
        p.append(role.rawValue)
        p.append(peerAddressType.rawValue)
        peerAddress.append(to: &p)
        p.appendLE16(interval)
        p.appendLE16(latency)
        p.appendLE16(supervisionTimeout)
        p.append(centralClockAccuracy)
        return LEMetaEvent.packet(subevent: LEMetaEvent.Subevent.connectionComplete, parameters: p)
    }
}

extension LEConnectionUpdateComplete {
    public init(status: HCIStatus, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.status = status
        self.handle = handle
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    public var packet: H4Packet {
        var p: [UInt8] = [status.rawValue]
        p.appendLE16(handle & 0x0FFF)
        p.appendLE16(interval)
        p.appendLE16(latency)
        p.appendLE16(supervisionTimeout)
        return LEMetaEvent.packet(subevent: LEMetaEvent.Subevent.connectionUpdateComplete, parameters: p)
    }
}
