// Informational parameters (OGF 0x04) and status parameters (OGF 0x05).

/// Read Local Version Information.
public struct ReadLocalVersionInformation: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.readLocalVersionInformation
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public struct ReturnParameters: Hashable, Sendable {
        /// HCI version: 6 = 4.0, 7 = 4.1, 8 = 4.2, 9 = 5.0, … (Assigned Numbers).
        public var hciVersion: UInt8
        public var hciRevision: UInt16
        public var lmpVersion: UInt8
        /// Company identifier of the controller's manufacturer.
        public var manufacturer: UInt16
        public var lmpSubversion: UInt16

        public init(hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, manufacturer: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciRevision = hciRevision
            self.lmpVersion = lmpVersion
            self.manufacturer = manufacturer
            self.lmpSubversion = lmpSubversion
        }
    }

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> ReturnParameters {
        var r = ByteReader(bytes)
        return ReturnParameters(
            hciVersion: try r.readU8("HCI_Version"), hciRevision: try r.readLE16("HCI_Revision"),
            lmpVersion: try r.readU8("LMP_Version"), manufacturer: try r.readLE16("Company_Identifier"),
            lmpSubversion: try r.readLE16("LMP_Subversion"))
    }
}

/// The 64-octet Supported_Commands bitmap.
public struct SupportedCommands: Hashable, Sendable {
    public var octets: [UInt8]
    public init(octets: [UInt8]) { self.octets = octets }

    /// Assumed when the controller cannot report its commands: everything.
    public static let all = SupportedCommands(octets: [UInt8](repeating: 0xFF, count: 64))

    public func contains(octet: Int, bit: Int) -> Bool {
        octet >= 0 && octet < octets.count && bit >= 0 && bit < 8 && octets[octet] & (1 << bit) != 0
    }

    public var writeLEHostSupported: Bool { contains(octet: 24, bit: 6) }
}

/// Read Local Supported Commands.
public struct ReadLocalSupportedCommands: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.readLocalSupportedCommands
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> SupportedCommands {
        var r = ByteReader(bytes)
        return SupportedCommands(octets: Array(try r.readBytes(64, "Supported_Commands")))
    }
}

/// Read Buffer Size: the controller's ACL (shared BR/EDR and, when LE Read Buffer Size says
/// 0/0, LE) data buffers.
public struct ReadBufferSize: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.readBufferSize
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public struct ReturnParameters: Hashable, Sendable {
        public var aclDataLength: UInt16
        public var scoDataLength: UInt8
        public var aclPacketCount: UInt16
        public var scoPacketCount: UInt16

        public init(aclDataLength: UInt16, scoDataLength: UInt8, aclPacketCount: UInt16, scoPacketCount: UInt16) {
            self.aclDataLength = aclDataLength
            self.scoDataLength = scoDataLength
            self.aclPacketCount = aclPacketCount
            self.scoPacketCount = scoPacketCount
        }
    }

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> ReturnParameters {
        var r = ByteReader(bytes)
        return ReturnParameters(
            aclDataLength: try r.readLE16("ACL_Data_Packet_Length"),
            scoDataLength: try r.readU8("Synchronous_Data_Packet_Length"),
            aclPacketCount: try r.readLE16("Total_Num_ACL_Data_Packets"),
            scoPacketCount: try r.readLE16("Total_Num_Synchronous_Data_Packets"))
    }
}

/// Read BD_ADDR: the controller's public address (00:00:00:00:00:00 if it has none).
public struct ReadBDAddr: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.readBDAddr
    public init() {}
    public func encodeParameters(into bytes: inout [UInt8]) {}

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> BluetoothAddress {
        var r = ByteReader(bytes)
        return try r.readAddress("BD_ADDR")
    }
}

/// Read RSSI of a connection (status parameters).
public struct ReadRSSI: HCICommandWithReturnParameters {
    public static let opcode = HCIOpcode.readRSSI
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public func encodeParameters(into bytes: inout [UInt8]) { bytes.appendLE16(handle) }

    public struct ReturnParameters: Hashable, Sendable {
        public var handle: UInt16
        /// dBm; 127 means not available.
        public var rssi: Int8

        public init(handle: UInt16, rssi: Int8) {
            self.handle = handle
            self.rssi = rssi
        }
    }

    public static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> ReturnParameters {
        var r = ByteReader(bytes)
        return ReturnParameters(handle: try r.readLE16("Handle") & 0x0FFF, rssi: try r.readI8("RSSI"))
    }
}

extension ReadLocalVersionInformation: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    public static func encodeReturnParameters(_ p: ReturnParameters, into bytes: inout [UInt8]) {
        bytes.append(p.hciVersion)
        bytes.appendLE16(p.hciRevision)
        bytes.append(p.lmpVersion)
        bytes.appendLE16(p.manufacturer)
        bytes.appendLE16(p.lmpSubversion)
    }
}

extension ReadLocalSupportedCommands: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    /// Always 64 octets: shorter bitmaps are padded with zeros, longer ones cut.
    public static func encodeReturnParameters(_ p: SupportedCommands, into bytes: inout [UInt8]) {
        for k in 0..<64 { bytes.append(k < p.octets.count ? p.octets[k] : 0) }
    }
}

extension ReadBufferSize: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    public static func encodeReturnParameters(_ p: ReturnParameters, into bytes: inout [UInt8]) {
        bytes.appendLE16(p.aclDataLength)
        bytes.append(p.scoDataLength)
        bytes.appendLE16(p.aclPacketCount)
        bytes.appendLE16(p.scoPacketCount)
    }
}

extension ReadBDAddr: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) { try Self.expectNoParameters(parameters) }

    public static func encodeReturnParameters(_ address: BluetoothAddress, into bytes: inout [UInt8]) {
        address.append(to: &bytes)
    }
}

extension ReadRSSI: HCIDecodableCommand, HCIReturnParametersEncoding {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("Handle") & 0x0FFF
        try r.expectEnd("Read RSSI")
    }

    public static func encodeReturnParameters(_ p: ReturnParameters, into bytes: inout [UInt8]) {
        bytes.appendLE16(p.handle & 0x0FFF)
        bytes.appendI8(p.rssi)
    }
}
