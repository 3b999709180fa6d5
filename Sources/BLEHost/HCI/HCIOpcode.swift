/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), little-endian on the wire. Open, so a
/// completion for a command this host does not know still carries its opcode.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    /// Opcode group field: 0x01 link control, 0x03 controller & baseband, 0x04 informational,
    /// 0x05 status, 0x08 LE controller.
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    /// Opcode command field within the group.
    public var ocf: UInt16 { rawValue & 0x03FF }

    /// Carried by Command Complete/Status events that only return command credits.
    public static let noOperation = HCIOpcode(rawValue: 0x0000)

    // Link control (OGF 0x01)
    public static let disconnect = HCIOpcode(ogf: 0x01, ocf: 0x0006)
    // Controller & baseband (OGF 0x03)
    public static let setEventMask = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public static let writeLEHostSupported = HCIOpcode(ogf: 0x03, ocf: 0x006D)
    // Informational (OGF 0x04)
    public static let readLocalVersionInformation = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    public static let readLocalSupportedCommands = HCIOpcode(ogf: 0x04, ocf: 0x0002)
    public static let readBufferSize = HCIOpcode(ogf: 0x04, ocf: 0x0005)
    public static let readBDAddr = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    // Status (OGF 0x05)
    public static let readRSSI = HCIOpcode(ogf: 0x05, ocf: 0x0005)
    // LE controller (OGF 0x08)
    public static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    public static let leReadBufferSize = HCIOpcode(ogf: 0x08, ocf: 0x0002)
    public static let leReadLocalSupportedFeatures = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0009)
    public static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leCreateConnection = HCIOpcode(ogf: 0x08, ocf: 0x000D)
    public static let leCreateConnectionCancel = HCIOpcode(ogf: 0x08, ocf: 0x000E)
    public static let leConnectionUpdate = HCIOpcode(ogf: 0x08, ocf: 0x0013)
    public static let leLongTermKeyRequestNegativeReply = HCIOpcode(ogf: 0x08, ocf: 0x001B)
    public static let leReadSupportedStates = HCIOpcode(ogf: 0x08, ocf: 0x001C)

    private static let names: [UInt16: String] = [
        0x0000: "No Operation",
        0x0406: "Disconnect",
        0x0C01: "Set Event Mask",
        0x0C03: "Reset",
        0x0C6D: "Write LE Host Supported",
        0x1001: "Read Local Version Information",
        0x1002: "Read Local Supported Commands",
        0x1005: "Read Buffer Size",
        0x1009: "Read BD_ADDR",
        0x1405: "Read RSSI",
        0x2001: "LE Set Event Mask",
        0x2002: "LE Read Buffer Size",
        0x2003: "LE Read Local Supported Features",
        0x2005: "LE Set Random Address",
        0x2006: "LE Set Advertising Parameters",
        0x2008: "LE Set Advertising Data",
        0x2009: "LE Set Scan Response Data",
        0x200A: "LE Set Advertising Enable",
        0x200B: "LE Set Scan Parameters",
        0x200C: "LE Set Scan Enable",
        0x200D: "LE Create Connection",
        0x200E: "LE Create Connection Cancel",
        0x2013: "LE Connection Update",
        0x201B: "LE Long Term Key Request Negative Reply",
        0x201C: "LE Read Supported States",
    ]

    /// `LE Set Scan Enable (0x200c)`; unknown opcodes show OGF/OCF.
    public var description: String {
        let hex = "0x" + Hex.encode([UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)])
        if let name = Self.names[rawValue] { return "\(name) (\(hex))" }
        return "opcode \(hex) (OGF 0x\(Hex.encode([ogf])), OCF 0x\(String(ocf, radix: 16)))"
    }
}
