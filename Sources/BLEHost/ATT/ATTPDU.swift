/// Any ATT PDU, decoded by switching on its opcode byte. The one decode entry for bytes received
/// on the ATT channel (L2CAP CID 4).
public enum ATTPDU: Hashable, Sendable {
    case errorResponse(ATTErrorResponse)
    case exchangeMTURequest(ATTExchangeMTURequest)
    case exchangeMTUResponse(ATTExchangeMTUResponse)
    case findInformationRequest(ATTFindInformationRequest)
    case findInformationResponse(ATTFindInformationResponse)
    case findByTypeValueRequest(ATTFindByTypeValueRequest)
    case findByTypeValueResponse(ATTFindByTypeValueResponse)
    case readByTypeRequest(ATTReadByTypeRequest)
    case readByTypeResponse(ATTReadByTypeResponse)
    case readRequest(ATTReadRequest)
    case readResponse(ATTReadResponse)
    case readBlobRequest(ATTReadBlobRequest)
    case readBlobResponse(ATTReadBlobResponse)
    case readMultipleRequest(ATTReadMultipleRequest)
    case readMultipleResponse(ATTReadMultipleResponse)
    case readByGroupTypeRequest(ATTReadByGroupTypeRequest)
    case readByGroupTypeResponse(ATTReadByGroupTypeResponse)
    case writeRequest(ATTWriteRequest)
    case writeResponse(ATTWriteResponse)
    case writeCommand(ATTWriteCommand)
    case prepareWriteRequest(ATTPrepareWriteRequest)
    case prepareWriteResponse(ATTPrepareWriteResponse)
    case executeWriteRequest(ATTExecuteWriteRequest)
    case executeWriteResponse(ATTExecuteWriteResponse)
    case handleValueNotification(ATTHandleValueNotification)
    case handleValueIndication(ATTHandleValueIndication)
    case handleValueConfirmation(ATTHandleValueConfirmation)
    /// An opcode this host does not implement (unknown, or known but unsupported such as Signed
    /// Write Command). Its ``ATTOpcode/kind`` and command bit decide whether it is answered.
    case unsupported(opcode: ATTOpcode, parameters: [UInt8])

    /// Decodes one whole PDU. Throws ``ATTDecodeError`` when the PDU is empty or its parameters
    /// do not fit its opcode; unknown opcodes decode as ``unsupported(opcode:parameters:)``.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(ATTDecodeError) -> ATTPDU {
        guard let first = bytes.first else {
            throw ATTDecodeError(opcode: nil, reason: DecodeError(.truncated, field: "opcode", detail: "empty PDU"))
        }
        let opcode = ATTOpcode(first)
        let p = bytes.dropFirst()
        do {
            switch opcode {
            case .errorResponse: return .errorResponse(try .init(parameters: p))
            case .exchangeMTURequest: return .exchangeMTURequest(try .init(parameters: p))
            case .exchangeMTUResponse: return .exchangeMTUResponse(try .init(parameters: p))
            case .findInformationRequest: return .findInformationRequest(try .init(parameters: p))
            case .findInformationResponse: return .findInformationResponse(try .init(parameters: p))
            case .findByTypeValueRequest: return .findByTypeValueRequest(try .init(parameters: p))
            case .findByTypeValueResponse: return .findByTypeValueResponse(try .init(parameters: p))
            case .readByTypeRequest: return .readByTypeRequest(try .init(parameters: p))
            case .readByTypeResponse: return .readByTypeResponse(try .init(parameters: p))
            case .readRequest: return .readRequest(try .init(parameters: p))
            case .readResponse: return .readResponse(try .init(parameters: p))
            case .readBlobRequest: return .readBlobRequest(try .init(parameters: p))
            case .readBlobResponse: return .readBlobResponse(try .init(parameters: p))
            case .readMultipleRequest: return .readMultipleRequest(try .init(parameters: p))
            case .readMultipleResponse: return .readMultipleResponse(try .init(parameters: p))
            case .readByGroupTypeRequest: return .readByGroupTypeRequest(try .init(parameters: p))
            case .readByGroupTypeResponse: return .readByGroupTypeResponse(try .init(parameters: p))
            case .writeRequest: return .writeRequest(try .init(parameters: p))
            case .writeResponse: return .writeResponse(try .init(parameters: p))
            case .writeCommand: return .writeCommand(try .init(parameters: p))
            case .prepareWriteRequest: return .prepareWriteRequest(try .init(parameters: p))
            case .prepareWriteResponse: return .prepareWriteResponse(try .init(parameters: p))
            case .executeWriteRequest: return .executeWriteRequest(try .init(parameters: p))
            case .executeWriteResponse: return .executeWriteResponse(try .init(parameters: p))
            case .handleValueNotification: return .handleValueNotification(try .init(parameters: p))
            case .handleValueIndication: return .handleValueIndication(try .init(parameters: p))
            case .handleValueConfirmation: return .handleValueConfirmation(try .init(parameters: p))
            default: return .unsupported(opcode: opcode, parameters: Array(p))
            }
        } catch {
            throw ATTDecodeError(opcode: opcode, reason: error)
        }
    }

    public static func decode(_ bytes: [UInt8]) throws(ATTDecodeError) -> ATTPDU { try decode(bytes[...]) }

    /// The PDU inside, for the cases that hold one.
    public var unit: (any ATTProtocolDataUnit)? {
        switch self {
        case .errorResponse(let p): return p
        case .exchangeMTURequest(let p): return p
        case .exchangeMTUResponse(let p): return p
        case .findInformationRequest(let p): return p
        case .findInformationResponse(let p): return p
        case .findByTypeValueRequest(let p): return p
        case .findByTypeValueResponse(let p): return p
        case .readByTypeRequest(let p): return p
        case .readByTypeResponse(let p): return p
        case .readRequest(let p): return p
        case .readResponse(let p): return p
        case .readBlobRequest(let p): return p
        case .readBlobResponse(let p): return p
        case .readMultipleRequest(let p): return p
        case .readMultipleResponse(let p): return p
        case .readByGroupTypeRequest(let p): return p
        case .readByGroupTypeResponse(let p): return p
        case .writeRequest(let p): return p
        case .writeResponse(let p): return p
        case .writeCommand(let p): return p
        case .prepareWriteRequest(let p): return p
        case .prepareWriteResponse(let p): return p
        case .executeWriteRequest(let p): return p
        case .executeWriteResponse(let p): return p
        case .handleValueNotification(let p): return p
        case .handleValueIndication(let p): return p
        case .handleValueConfirmation(let p): return p
        case .unsupported: return nil
        }
    }

    public var opcode: ATTOpcode {
        if case .unsupported(let opcode, _) = self { return opcode }
        return unit.map { type(of: $0).opcode } ?? ATTOpcode(0)
    }

    /// The whole PDU on the wire.
    public func encoded() -> [UInt8] {
        if case .unsupported(let opcode, let parameters) = self { return [opcode.rawValue] + parameters }
        return unit?.encoded() ?? []
    }
}

/// A PDU that could not be decoded: empty (`opcode` nil), or parameters of the wrong size or
/// content for `opcode`. A request in this state is answered with "Invalid PDU".
public struct ATTDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public var opcode: ATTOpcode?
    public var reason: DecodeError

    public init(opcode: ATTOpcode?, reason: DecodeError) {
        self.opcode = opcode
        self.reason = reason
    }

    public var description: String {
        "ATT PDU \(opcode.map { "\($0)" } ?? "(empty)"): \(reason)"
    }
}
