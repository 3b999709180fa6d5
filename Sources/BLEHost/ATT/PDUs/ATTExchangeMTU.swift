/// Exchange MTU Request (0x02): the client's receive MTU. Both sides then use the smaller of the
/// two receive MTUs (never below 23).
public struct ATTExchangeMTURequest: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientRxMTU: UInt16

    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        clientRxMTU = try r.readLE16("client rx mtu")
        try r.expectEnd("exchange mtu request")
    }

    public func appendParameters(to bytes: inout [UInt8]) { bytes.appendLE16(clientRxMTU) }
}

/// Exchange MTU Response (0x03): the server's receive MTU.
public struct ATTExchangeMTUResponse: ATTProtocolDataUnit {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverRxMTU: UInt16

    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        serverRxMTU = try r.readLE16("server rx mtu")
        try r.expectEnd("exchange mtu response")
    }

    public func appendParameters(to bytes: inout [UInt8]) { bytes.appendLE16(serverRxMTU) }
}
