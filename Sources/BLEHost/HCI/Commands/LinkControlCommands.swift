// Link control commands (OGF 0x01).

/// Disconnect: completes with Command Status, then Disconnection Complete.
public struct Disconnect: HCICommand {
    public static let opcode = HCIOpcode.disconnect
    public var handle: UInt16
    /// Sent to the peer; 0x13 "remote user terminated" is the usual choice.
    public var reason: HCIStatus
    public init(handle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        self.handle = handle
        self.reason = reason
    }
    public func encodeParameters(into bytes: inout [UInt8]) {
        bytes.appendLE16(handle & 0x0FFF)
        bytes.append(reason.rawValue)
    }
}

extension Disconnect: HCIDecodableCommand {
    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        handle = try r.readLE16("Connection_Handle") & 0x0FFF
        reason = HCIStatus(rawValue: try r.readU8("Reason"))
        try r.expectEnd("Disconnect")
    }
}
