// LE controller commands (OGF 0x08) that configure and describe the controller.

/// Which LE Meta subevents the controller may send (LE Set Event Mask).
public struct LEEventMask: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let connectionComplete = LEEventMask(rawValue: 1 << 0)
    public static let advertisingReport = LEEventMask(rawValue: 1 << 1)
    public static let connectionUpdateComplete = LEEventMask(rawValue: 1 << 2)
    public static let readRemoteFeaturesComplete = LEEventMask(rawValue: 1 << 3)
    public static let longTermKeyRequest = LEEventMask(rawValue: 1 << 4)
    /// Off by default: when on, the host must answer each request (0x2020/0x2021).
    public static let remoteConnectionParameterRequest = LEEventMask(rawValue: 1 << 5)
    public static let enhancedConnectionComplete = LEEventMask(rawValue: 1 << 9)

    /// What this host asks for: the classic 0x1F (as noble and bleno), no parameter requests.
    public static let leHost: LEEventMask = [
        .connectionComplete, .advertisingReport, .connectionUpdateComplete, .readRemoteFeaturesComplete,
        .longTermKeyRequest,
    ]
}

/// LE Set Event Mask (LE_Event_Mask u64).
public struct LESetEventMask: HCICommand {
    public static let opcode = HCIOpcode.leSetEventMask
    public var mask: LEEventMask
    public init(mask: LEEventMask = .leHost) { self.mask = mask }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE64(mask.rawValue) }
}

/// LE Read Buffer Size. A controller that shares its ACL buffers between BR/EDR and LE answers
/// 0/0: then Read Buffer Size gives the numbers.
public struct LEReadBufferSize: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.leReadBufferSize
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public struct ReturnParameters: Hashable, Sendable {
        public var dataLength: UInt16
        public var packetCount: UInt8

        public init(dataLength: UInt16, packetCount: UInt8) {
            self.dataLength = dataLength
            self.packetCount = packetCount
        }
        /// 0/0: use Read Buffer Size instead.
        public var isShared: Bool { dataLength == 0 || packetCount == 0 }
    }

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> ReturnParameters {
        var r = ByteReader(bytes)
        return ReturnParameters(
            dataLength: try r.readLE16("LE_ACL_Data_Packet_Length"),
            packetCount: try r.readU8("Total_Num_LE_ACL_Data_Packets"))
    }
}

/// LE feature bits (LE Read Local Supported Features); open to bits without a name here.
public struct LEFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let encryption = LEFeatures(rawValue: 1 << 0)
    public static let connectionParametersRequest = LEFeatures(rawValue: 1 << 1)
    public static let extendedRejectIndication = LEFeatures(rawValue: 1 << 2)
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(rawValue: 1 << 3)
    public static let ping = LEFeatures(rawValue: 1 << 4)
    public static let dataPacketLengthExtension = LEFeatures(rawValue: 1 << 5)
    public static let privacy = LEFeatures(rawValue: 1 << 6)
    public static let extendedScannerFilterPolicies = LEFeatures(rawValue: 1 << 7)
    public static let twoMegabitPHY = LEFeatures(rawValue: 1 << 8)
    public static let codedPHY = LEFeatures(rawValue: 1 << 11)
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
}

/// LE Read Local Supported Features.
public struct LEReadLocalSupportedFeatures: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.leReadLocalSupportedFeatures
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> LEFeatures {
        var r = ByteReader(bytes)
        return LEFeatures(rawValue: try r.readLE64("LE_Features"))
    }
}

/// LE Set Random Address. Controllers refuse it (0x0C) while advertising, scanning or initiating.
public struct LESetRandomAddress: HCICommand {
    public static let opcode = HCIOpcode.leSetRandomAddress
    public var address: BluetoothAddress
    public init(address: BluetoothAddress) { self.address = address }
    public func encodeParameters(into bytes: inout [UInt8]) { address.append(to: &bytes) }
}

/// LE Read Supported States: a bitmap of the allowed combinations of advertising, scanning,
/// initiating and connection roles.
public struct LEReadSupportedStates: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.leReadSupportedStates
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> UInt64 {
        var r = ByteReader(bytes)
        return try r.readLE64("LE_States")
    }
}

/// LE Long Term Key Request Negative Reply: this host never pairs, so it has no key to give.
public struct LELongTermKeyRequestNegativeReply: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.leLongTermKeyRequestNegativeReply
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE16(handle & 0x0FFF) }

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> UInt16 {
        var r = ByteReader(bytes)
        return try r.readLE16("Connection_Handle") & 0x0FFF
    }
}

extension LESetEventMask: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        mask = LEEventMask(rawValue: try r.readLE64("LE_Event_Mask"))
        try r.expectEnd("LE Set Event Mask")
    }
}

extension LEReadBufferSize: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    public static func encodeReturnParameters(_ p: ReturnParameters, into bytes: inout [UInt8]) {
        bytes.appendLE16(p.dataLength)
        bytes.append(p.packetCount)
    }
}

extension LEReadLocalSupportedFeatures: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    public static func encodeReturnParameters(_ features: LEFeatures, into bytes: inout [UInt8]) {
        bytes.appendLE64(features.rawValue)
    }
}

extension LESetRandomAddress: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        address = try r.readAddress("Random_Address")
        try r.expectEnd("LE Set Random Address")
    }
}

extension LEReadSupportedStates: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    public static func encodeReturnParameters(_ states: UInt64, into bytes: inout [UInt8]) {
        bytes.appendLE64(states)
    }
}

extension LELongTermKeyRequestNegativeReply: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        try r.expectEnd("LE Long Term Key Request Negative Reply")
    }

    public static func encodeReturnParameters(_ handle: UInt16, into bytes: inout [UInt8]) {
        bytes.appendLE16(handle & 0x0FFF)
    }
}
