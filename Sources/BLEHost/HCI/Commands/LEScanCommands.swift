// LE legacy scanning commands (OGF 0x08). Change parameters only with scanning disabled.

/// LE_Scan_Type. Open.
public struct LEScanType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Listen only: enough for RSSI and advertising data.
    public static let passive = LEScanType(rawValue: 0x00)
    /// Also send scan requests, to get scan responses.
    public static let active = LEScanType(rawValue: 0x01)
}

/// LE Set Scan Parameters (7 bytes). Interval and window in units of 0.625 ms; window ==
/// interval scans continuously.
public struct LESetScanParameters: HCICommand, Hashable {
    public static let opcode = HCIOpcode.leSetScanParameters
    public var type: LEScanType
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: AddressType
    /// 0: accept all advertisers.
    public var filterPolicy: UInt8

    /// Defaults: passive, continuous 11.25 ms (0x0012/0x0012, as noble), public address.
    public init(
        type: LEScanType = .passive, interval: UInt16 = 0x0012, window: UInt16 = 0x0012,
        ownAddressType: AddressType = .public, filterPolicy: UInt8 = 0
    ) {
        self.type = type
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(type.rawValue)
        bytes.appendLE16(interval)
        bytes.appendLE16(window)
        bytes.append(ownAddressType.rawValue)
        bytes.append(filterPolicy)
    }
}

/// LE Set Scan Enable. Keep duplicate filtering off: with it on the controller reports each
/// advertiser once per enable and RSSI stops updating.
public struct LESetScanEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetScanEnable
    public var enabled: Bool
    public var filterDuplicates: Bool
    public init(_ enabled: Bool, filterDuplicates: Bool = false) {
        self.enabled = enabled
        self.filterDuplicates = filterDuplicates
    }
    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(enabled ? 1 : 0)
        bytes.append(filterDuplicates ? 1 : 0)
    }
}

extension LESetScanParameters: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        type = LEScanType(rawValue: try r.readU8("LE_Scan_Type"))
        interval = try r.readLE16("LE_Scan_Interval")
        window = try r.readLE16("LE_Scan_Window")
        ownAddressType = AddressType(rawValue: try r.readU8("Own_Address_Type"))
        filterPolicy = try r.readU8("Scanning_Filter_Policy")
        try r.expectEnd("LE Set Scan Parameters")
    }
}

extension LESetScanEnable: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        enabled = try r.readU8("LE_Scan_Enable") != 0
        filterDuplicates = try r.readU8("Filter_Duplicates") != 0
        try r.expectEnd("LE Set Scan Enable")
    }
}
