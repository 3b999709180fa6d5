// LE legacy advertising commands (OGF 0x08). Change them only with advertising disabled:
// disable → parameters → data → scan response → enable.

/// Legacy advertising PDU type (Advertising_Type). Open.
public struct LEAdvertisingType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// ADV_IND: connectable and scannable undirected.
    public static let connectableUndirected = LEAdvertisingType(rawValue: 0x00)
    /// ADV_DIRECT_IND, high duty cycle.
    public static let connectableDirectedHighDuty = LEAdvertisingType(rawValue: 0x01)
    /// ADV_SCAN_IND: scannable, not connectable.
    public static let scannableUndirected = LEAdvertisingType(rawValue: 0x02)
    /// ADV_NONCONN_IND.
    public static let nonConnectableUndirected = LEAdvertisingType(rawValue: 0x03)
    /// ADV_DIRECT_IND, low duty cycle.
    public static let connectableDirectedLowDuty = LEAdvertisingType(rawValue: 0x04)

    /// A peripheral link can come out of advertising of this type.
    public var isConnectable: Bool { self == .connectableUndirected || self == .connectableDirectedHighDuty || self == .connectableDirectedLowDuty }

    public var description: String {
        switch rawValue {
        case 0: return "ADV_IND"
        case 1: return "ADV_DIRECT_IND (high duty)"
        case 2: return "ADV_SCAN_IND"
        case 3: return "ADV_NONCONN_IND"
        case 4: return "ADV_DIRECT_IND (low duty)"
        default: return "advertising type \(rawValue)"
        }
    }
}

/// LE Set Advertising Parameters (15 bytes). Intervals in units of 0.625 ms.
public struct LESetAdvertisingParameters: HCICommand, Hashable {
    public static let opcode = HCIOpcode.leSetAdvertisingParameters
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var type: LEAdvertisingType
    public var ownAddressType: AddressType
    /// Only for directed advertising.
    public var peerAddressType: AddressType
    public var peerAddress: BluetoothAddress
    /// Bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
    public var channelMap: UInt8
    /// 0: anyone may scan and connect.
    public var filterPolicy: UInt8

    /// Defaults: 100 ms (0x00A0), ADV_IND, public address, all channels, no filter.
    public init(
        intervalMin: UInt16 = 0x00A0, intervalMax: UInt16 = 0x00A0, type: LEAdvertisingType = .connectableUndirected,
        ownAddressType: AddressType = .public, peerAddressType: AddressType = .public,
        peerAddress: BluetoothAddress = BluetoothAddress(rawValue: 0), channelMap: UInt8 = 0x07, filterPolicy: UInt8 = 0
    ) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.type = type
        self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.channelMap = channelMap
        self.filterPolicy = filterPolicy
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE16(intervalMin)
        bytes.appendLE16(intervalMax)
        bytes.append(type.rawValue)
        bytes.append(ownAddressType.rawValue)
        bytes.append(peerAddressType.rawValue)
        peerAddress.append(to: &bytes)
        bytes.append(channelMap)
        bytes.append(filterPolicy)
    }
}

/// LE Set Advertising Data: always 32 parameter bytes, the length then 31 zero-padded bytes.
public struct LESetAdvertisingData: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingData
    public var data: AdvertisingPayload
    public init(_ data: AdvertisingPayload) { self.data = data }
    public func encodeParameters(into bytes: inout [UInt8]) { data.appendPadded(to: &bytes) }
}

/// LE Set Scan Response Data: same layout as ``LESetAdvertisingData``.
public struct LESetScanResponseData: HCICommand {
    public static let opcode = HCIOpcode.leSetScanResponseData
    public var data: AdvertisingPayload
    public init(_ data: AdvertisingPayload) { self.data = data }
    public func encodeParameters(into bytes: inout [UInt8]) { data.appendPadded(to: &bytes) }
}

/// LE Set Advertising Enable.
public struct LESetAdvertisingEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetAdvertisingEnable
    public var enabled: Bool
    public init(_ enabled: Bool) { self.enabled = enabled }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.append(enabled ? 1 : 0) }
}

extension LESetAdvertisingParameters: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        intervalMin = try r.readLE16("Advertising_Interval_Min")
        intervalMax = try r.readLE16("Advertising_Interval_Max")
        type = LEAdvertisingType(rawValue: try r.readU8("Advertising_Type"))
        ownAddressType = AddressType(rawValue: try r.readU8("Own_Address_Type"))
        peerAddressType = AddressType(rawValue: try r.readU8("Peer_Address_Type"))
        peerAddress = try r.readAddress("Peer_Address")
        channelMap = try r.readU8("Advertising_Channel_Map")
        filterPolicy = try r.readU8("Advertising_Filter_Policy")
        try r.expectEnd("LE Set Advertising Parameters")
    }
}

extension AdvertisingPayload {
    /// Decodes the 32 parameter bytes of LE Set Advertising/Scan Response Data: a length of at
    /// most 31, then that many significant bytes of 31 (the padding is ignored).
    static func decodePadded(_ parameters: ArraySlice<UInt8>, field: StaticString) throws(DecodeError) -> AdvertisingPayload {
        var r = ByteReader(parameters)
        let length = Int(try r.readU8(field))
        let all = try r.readBytes(AdvertisingPayload.maximumLength, field)
        try r.expectEnd(field)
        guard length <= AdvertisingPayload.maximumLength else {
            throw DecodeError(.lengthMismatch, field: field, detail: "length \(length); at most 31")
        }
        do {
            return try AdvertisingPayload(Array(all.prefix(length)))
        } catch {
            throw DecodeError(.lengthMismatch, field: field, detail: "\(error)")
        }
    }
}

extension LESetAdvertisingData: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        data = try AdvertisingPayload.decodePadded(parameters, field: "Advertising_Data")
    }
}

extension LESetScanResponseData: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        data = try AdvertisingPayload.decodePadded(parameters, field: "Scan_Response_Data")
    }
}

extension LESetAdvertisingEnable: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        enabled = try r.readU8("Advertising_Enable") != 0
        try r.expectEnd("LE Set Advertising Enable")
    }
}
