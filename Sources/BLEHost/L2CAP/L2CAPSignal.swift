/// An LE signalling command code (L2CAP CID 0x0005). Open.
public struct L2CAPSignalCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = L2CAPSignalCode(rawValue: 0x01)
    public static let disconnectionRequest = L2CAPSignalCode(rawValue: 0x06)
    public static let connectionParameterUpdateRequest = L2CAPSignalCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = L2CAPSignalCode(rawValue: 0x13)
}

/// Why a signalling command was rejected. Open.
public struct L2CAPRejectReason: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let commandNotUnderstood = L2CAPRejectReason(rawValue: 0x0000)
    public static let signallingMTUExceeded = L2CAPRejectReason(rawValue: 0x0001)
    public static let invalidCID = L2CAPRejectReason(rawValue: 0x0002)
}

/// One LE signalling command: `code | identifier | length u16 | data`. An LE signalling frame
/// carries exactly one.
public enum L2CAPSignal: Hashable, Sendable {
    case commandReject(identifier: UInt8, reason: L2CAPRejectReason, data: ArraySlice<UInt8>)
    /// From the peripheral: please change the connection parameters.
    case connectionParameterUpdateRequest(identifier: UInt8, LEConnectionParameters)
    /// Result 0 accepted, 1 rejected.
    case connectionParameterUpdateResponse(identifier: UInt8, result: UInt16)
    case other(code: L2CAPSignalCode, identifier: UInt8, data: ArraySlice<UInt8>)

    public var identifier: UInt8 {
        switch self {
        case .commandReject(let id, _, _), .connectionParameterUpdateRequest(let id, _),
            .connectionParameterUpdateResponse(let id, _), .other(_, let id, _):
            return id
        }
    }

    /// Decodes one command. Throws if the header is short, the length disagrees with the bytes,
    /// or a known command's data has the wrong size.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(bytes)
        let code = L2CAPSignalCode(rawValue: try r.readU8("signalling code"))
        let identifier = try r.readU8("signalling identifier")
        let length = Int(try r.readLE16("signalling length"))
        var data = ByteReader(try r.readBytes(length, "signalling data"))
        try r.expectEnd("signalling command")
        switch code {
        case .commandReject:
            let reason = L2CAPRejectReason(rawValue: try data.readLE16("Reason"))
            self = .commandReject(identifier: identifier, reason: reason, data: data.readRest())
        case .connectionParameterUpdateRequest:
            let parameters = LEConnectionParameters(
                intervalMin: try data.readLE16("Interval_Min"), intervalMax: try data.readLE16("Interval_Max"),
                latency: try data.readLE16("Latency"), supervisionTimeout: try data.readLE16("Timeout"))
            try data.expectEnd("Connection Parameter Update Request")
            self = .connectionParameterUpdateRequest(identifier: identifier, parameters)
        case .connectionParameterUpdateResponse:
            let result = try data.readLE16("Result")
            try data.expectEnd("Connection Parameter Update Response")
            self = .connectionParameterUpdateResponse(identifier: identifier, result: result)
        default:
            self = .other(code: code, identifier: identifier, data: data.readRest())
        }
    }

    /// The command's bytes (the L2CAP payload on CID 0x0005).
    public var encoded: [UInt8] {
        var body: [UInt8] = []
        let code: L2CAPSignalCode
        switch self {
        case .commandReject(_, let reason, let data):
            code = .commandReject
            body.appendLE16(reason.rawValue)
            body.append(contentsOf: data)
        case .connectionParameterUpdateRequest(_, let parameters):
            code = .connectionParameterUpdateRequest
            parameters.append(to: &body)
        case .connectionParameterUpdateResponse(_, let result):
            code = .connectionParameterUpdateResponse
            body.appendLE16(result)
        case .other(let c, _, let data):
            code = c
            body.append(contentsOf: data)
        }
        var out: [UInt8] = [code.rawValue, identifier]
        out.appendLE16(UInt16(truncatingIfNeeded: body.count))
        out.append(contentsOf: body)
        return out
    }
}
