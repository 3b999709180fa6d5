// LE connection commands (OGF 0x08).

/// Connection parameters as LE Create Connection, LE Connection Update and the L2CAP Connection
/// Parameter Update Request carry them.
public struct LEConnectionParameters: Hashable, Sendable {
    /// Units of 1.25 ms, 6…3200 (7.5 ms…4 s).
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    /// Connection events the peripheral may skip, 0…499.
    public var latency: UInt16
    /// Units of 10 ms, 10…3200 (100 ms…32 s).
    public var supervisionTimeout: UInt16

    /// Defaults: 30–50 ms interval, no latency, 5 s supervision timeout.
    public init(intervalMin: UInt16 = 0x0018, intervalMax: UInt16 = 0x0028, latency: UInt16 = 0, supervisionTimeout: UInt16 = 0x01F4) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }

    /// The ranges and the rule that the supervision timeout outlasts two (latency + 1) intervals.
    public var isValid: Bool {
        guard (6...3200).contains(intervalMin), (6...3200).contains(intervalMax), intervalMin <= intervalMax,
            latency <= 499, (10...3200).contains(supervisionTimeout)
        else { return false }
        // timeout × 10 ms > (1 + latency) × intervalMax × 1.25 ms × 2, in units of 0.25 ms:
        return Int(supervisionTimeout) * 40 > (1 + Int(latency)) * Int(intervalMax) * 10
    }

    func append(to bytes: inout [UInt8]) {
        bytes.appendLE16(intervalMin)
        bytes.appendLE16(intervalMax)
        bytes.appendLE16(latency)
        bytes.appendLE16(supervisionTimeout)
    }
}

/// LE Create Connection (25 bytes): Command Status, then LE Connection Complete. Stop scanning
/// first; cancel with ``LECreateConnectionCancel``.
public struct LECreateConnection: HCICommand, Hashable {
    public static let opcode = HCIOpcode.leCreateConnection
    /// Units of 0.625 ms.
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// True: connect to any device on the filter accept list, ignoring the peer address.
    public var useFilterAcceptList: Bool
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    public var ownAddressType: AddressType
    public var connection: LEConnectionParameters
    /// Units of 0.625 ms; informative.
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(
        peerAddress: BluetoothAddress, peerAddressType: AddressType, ownAddressType: AddressType = .public,
        scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, useFilterAcceptList: Bool = false,
        connection: LEConnectionParameters = LEConnectionParameters(), minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.useFilterAcceptList = useFilterAcceptList
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connection = connection
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE16(scanInterval)
        bytes.appendLE16(scanWindow)
        bytes.append(useFilterAcceptList ? 1 : 0)
        bytes.append(peerAddressType.rawValue)
        peerAddress.append(to: &bytes)
        bytes.append(ownAddressType.rawValue)
        connection.append(to: &bytes)
        bytes.appendLE16(minCELength)
        bytes.appendLE16(maxCELength)
    }
}

/// LE Create Connection Cancel: Command Complete, then LE Connection Complete with status 0x02
/// (unknown connection identifier). 0x0C if no connection attempt is pending.
public struct LECreateConnectionCancel: HCICommand {
    public static let opcode = HCIOpcode.leCreateConnectionCancel
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}
}

/// LE Connection Update (14 bytes): Command Status, then LE Connection Update Complete.
public struct LEConnectionUpdate: HCICommand, Hashable {
    public static let opcode = HCIOpcode.leConnectionUpdate
    public var handle: UInt16
    public var parameters: LEConnectionParameters
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(handle: UInt16, parameters: LEConnectionParameters, minCELength: UInt16 = 0, maxCELength: UInt16 = 0) {
        self.handle = handle
        self.parameters = parameters
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE16(handle & 0x0FFF)
        parameters.append(to: &bytes)
        bytes.appendLE16(minCELength)
        bytes.appendLE16(maxCELength)
    }
}

extension LEConnectionParameters {
    init(from r: inout ByteReader) throws(DecodeError) {
        intervalMin = try r.readLE16("Connection_Interval_Min")
        intervalMax = try r.readLE16("Connection_Interval_Max")
        latency = try r.readLE16("Max_Latency")
        supervisionTimeout = try r.readLE16("Supervision_Timeout")
    }
}

extension LECreateConnection: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        scanInterval = try r.readLE16("LE_Scan_Interval")
        scanWindow = try r.readLE16("LE_Scan_Window")
        useFilterAcceptList = try r.readU8("Initiator_Filter_Policy") != 0
        peerAddressType = AddressType(rawValue: try r.readU8("Peer_Address_Type"))
        peerAddress = try r.readAddress("Peer_Address")
        ownAddressType = AddressType(rawValue: try r.readU8("Own_Address_Type"))
        connection = try LEConnectionParameters(from: &r)
        minCELength = try r.readLE16("Min_CE_Length")
        maxCELength = try r.readLE16("Max_CE_Length")
        try r.expectEnd("LE Create Connection")
    }
}

extension LECreateConnectionCancel: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }
}

extension LEConnectionUpdate: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        self.parameters = try LEConnectionParameters(from: &r)
        minCELength = try r.readLE16("Min_CE_Length")
        maxCELength = try r.readLE16("Max_CE_Length")
        try r.expectEnd("LE Connection Update")
    }
}
