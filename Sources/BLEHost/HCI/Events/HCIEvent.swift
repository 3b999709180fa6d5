/// An HCI event code. Open: unknown events are kept with their code.
public struct HCIEventCode: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    public static let encryptionChange = HCIEventCode(rawValue: 0x08)
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    public static let hardwareError = HCIEventCode(rawValue: 0x10)
    public static let numberOfCompletedPackets = HCIEventCode(rawValue: 0x13)
    public static let leMeta = HCIEventCode(rawValue: 0x3E)
}

/// An HCI event from the controller. Decoding never copies: slices share the packet's storage.
public enum HCIEvent: Hashable, Sendable {
    case commandComplete(CommandComplete)
    case commandStatus(CommandStatus)
    case disconnectionComplete(DisconnectionComplete)
    case encryptionChange(EncryptionChange)
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    /// The controller failed; the host should reset it. Carries the vendor's hardware code.
    case hardwareError(code: UInt8)
    case le(LEMetaEvent)
    /// An event this host does not decode, kept whole.
    case unknown(code: HCIEventCode, parameters: ArraySlice<UInt8>)

    /// Decodes an event packet without its H4 type byte: `code | length | parameters`. The length
    /// must match the bytes present; truncated or inconsistent parameters throw.
    public init(decoding packet: ArraySlice<UInt8>) throws(DecodeError) {
        // The header by index: every advertising report arrives through here, and each slice or
        // reader copied on the way costs a retain and a release.
        let s = packet.startIndex
        guard packet.count >= 2 else {
            throw DecodeError(.truncated, field: packet.isEmpty ? "event code" : "parameter length", detail: "needs 1 bytes, 0 left")
        }
        let code = HCIEventCode(rawValue: packet[s])
        let length = Int(packet[s + 1])
        let present = packet.count - 2
        if present != length {
            let kind: DecodeError.Kind = present < length ? .truncated : .lengthMismatch
            throw DecodeError(kind, field: "event parameters", detail: "length says \(length), \(present) present")
        }
        let parameters = packet[(s + 2)...]
        switch code {
        case .commandComplete: self = .commandComplete(try CommandComplete(parameters: parameters))
        case .commandStatus: self = .commandStatus(try CommandStatus(parameters: parameters))
        case .disconnectionComplete: self = .disconnectionComplete(try DisconnectionComplete(parameters: parameters))
        case .encryptionChange: self = .encryptionChange(try EncryptionChange(parameters: parameters))
        case .numberOfCompletedPackets: self = .numberOfCompletedPackets(try NumberOfCompletedPackets(parameters: parameters))
        case .hardwareError:
            var p = ByteReader(parameters)
            self = .hardwareError(code: try p.readU8("Hardware_Code"))
        case .leMeta: self = .le(try LEMetaEvent(parameters: parameters))
        default: self = .unknown(code: code, parameters: parameters)
        }
    }

    public init(decoding packet: [UInt8]) throws(DecodeError) { try self.init(decoding: packet[...]) }
}

// MARK: The controller side (a simulated controller encodes events)

extension HCIEventCode {
    /// Longest parameter list an event carries (its length is one byte).
    public static let maximumParameterLength = 255

    /// An event packet with this code: `code | length | parameters`. The encoders in this
    /// module never build more than ``maximumParameterLength`` parameter bytes.
    public func packet(parameters: [UInt8]) -> H4Packet {
        assert(parameters.count <= Self.maximumParameterLength, "event parameters over 255 bytes")
        var body: [UInt8] = [rawValue, UInt8(truncatingIfNeeded: parameters.count)]
        body.reserveCapacity(2 + parameters.count)
        body.append(contentsOf: parameters)
        return H4Packet(type: .event, body: body)
    }
}
