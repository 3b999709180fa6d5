// Controller & baseband commands (OGF 0x03).

/// HCI Reset: returns the controller to its initial state. Completes with Command Complete.
public struct Reset: HCICommand {
    public static let opcode = HCIOpcode.reset
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}
}

/// Which events the controller may send (Set Event Mask). Command Complete, Command Status and
/// Number Of Completed Packets cannot be masked: the controller always sends them.
public struct HCIEventMask: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let disconnectionComplete = HCIEventMask(rawValue: 1 << 4)
    public static let encryptionChange = HCIEventMask(rawValue: 1 << 7)
    public static let hardwareError = HCIEventMask(rawValue: 1 << 15)
    public static let dataBufferOverflow = HCIEventMask(rawValue: 1 << 25)
    public static let encryptionKeyRefreshComplete = HCIEventMask(rawValue: 1 << 47)
    public static let leMeta = HCIEventMask(rawValue: 1 << 61)

    /// What this LE host asks for.
    public static let leHost: HCIEventMask = [
        .disconnectionComplete, .encryptionChange, .hardwareError, .dataBufferOverflow,
        .encryptionKeyRefreshComplete, .leMeta,
    ]
}

/// Set Event Mask (Event_Mask u64).
public struct SetEventMask: HCICommand {
    public static let opcode = HCIOpcode.setEventMask
    public var mask: HCIEventMask
    public init(mask: HCIEventMask = .leHost) { self.mask = mask }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE64(mask.rawValue) }
}

/// Write LE Host Supported (LE_Supported_Host, Simultaneous_LE_Host). LE-only controllers do
/// not know it and answer "unknown command", which is harmless.
public struct WriteLEHostSupported: HCICommand {
    public static let opcode = HCIOpcode.writeLEHostSupported
    public var leSupported: Bool
    public var simultaneous: Bool
    public init(leSupported: Bool = true, simultaneous: Bool = false) {
        self.leSupported = leSupported
        self.simultaneous = simultaneous
    }
    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.append(leSupported ? 1 : 0)
        bytes.append(simultaneous ? 1 : 0)
    }
}

extension Reset: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }
}

extension SetEventMask: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        mask = HCIEventMask(rawValue: try r.readLE64("Event_Mask"))
        try r.expectEnd("Set Event Mask")
    }
}

extension WriteLEHostSupported: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        leSupported = try r.readU8("LE_Supported_Host") != 0
        simultaneous = try r.readU8("Simultaneous_LE_Host") != 0
        try r.expectEnd("Write LE Host Supported")
    }
}
