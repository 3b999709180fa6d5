import BLEHost

/// The action code that starts a write to a Herald signal characteristic. Open: an unknown code
/// survives decoding so the node can count it instead of failing.
public struct SignalAction: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `0x01`, length u16, payload: a phone tells who it is (e.g. one that cannot advertise).
    public static let writePayload = SignalAction(rawValue: 0x01)
    /// `0x02`, RSSI int16: the writer measured us; a write is also a sighting of the writer.
    public static let writeRSSI = SignalAction(rawValue: 0x02)
    /// `0x03`, RSSI int16, length u16, concatenated payloads of phones the writer saw recently.
    public static let writePayloadSharing = SignalAction(rawValue: 0x03)
    /// `0x04`, length u16, opaque application data.
    public static let writeImmediate = SignalAction(rawValue: 0x04)

    public var description: String {
        switch self {
        case .writePayload: return "writePayload"
        case .writeRSSI: return "writeRSSI"
        case .writePayloadSharing: return "writePayloadSharing"
        case .writeImmediate: return "writeImmediate"
        default: return "action 0x" + Hex.encode([rawValue])
        }
    }
}

/// One write to a Herald signal characteristic (herald-for-android `SignalCharacteristicData`,
/// herald-for-ios `BLETransmitter.didReceiveWrite`). All integers little-endian.
public enum SignalWrite: Hashable, Sendable {
    /// An empty write: Herald's "wake up" to an iOS transmitter.
    case wake
    case payload([UInt8])
    case rssi(Int16)
    /// `payloads` is the concatenation as written; split it with ``SharedPayloads``.
    case payloadSharing(rssi: Int16, payloads: [UInt8])
    case immediate([UInt8])
    /// An action this node does not know; `data` is everything after the action byte.
    case unknown(action: SignalAction, data: [UInt8])

    /// A length field is 16 bits.
    public static let maximumDataLength = Int(UInt16.max)

    /// Decodes a write. Every length is checked exactly, as Herald for iOS does: a write whose
    /// size disagrees with its action (or its own length field) is a ``SignalWriteError``, which
    /// the node answers with ATT error 0x0D.
    public init(decoding bytes: ArraySlice<UInt8>) throws(SignalWriteError) {
        guard let code = bytes.first else {
            self = .wake
            return
        }
        let action = SignalAction(rawValue: code)
        let start = bytes.startIndex
        func le16(_ offset: Int) -> UInt16 { UInt16(bytes[start + offset]) | UInt16(bytes[start + offset + 1]) << 8 }
        /// A u16 length at `offset`, then exactly that many bytes to the end of the write.
        func counted(at offset: Int) throws(SignalWriteError) -> [UInt8] {
            guard bytes.count >= offset + 2 else { throw SignalWriteError(action: action, expected: offset + 2, actual: bytes.count, atLeast: true) }
            let count = Int(le16(offset))
            guard bytes.count == offset + 2 + count else { throw SignalWriteError(action: action, expected: offset + 2 + count, actual: bytes.count) }
            return Array(bytes.dropFirst(offset + 2))
        }
        switch action {
        case .writePayload:
            self = .payload(try counted(at: 1))
        case .writeRSSI:
            guard bytes.count == 3 else { throw SignalWriteError(action: action, expected: 3, actual: bytes.count) }
            self = .rssi(Int16(bitPattern: le16(1)))
        case .writePayloadSharing:
            let payloads = try counted(at: 3)
            self = .payloadSharing(rssi: Int16(bitPattern: le16(1)), payloads: payloads)
        case .writeImmediate:
            self = .immediate(try counted(at: 1))
        default:
            self = .unknown(action: action, data: Array(bytes.dropFirst()))
        }
    }

    public init(decoding bytes: [UInt8]) throws(SignalWriteError) { try self.init(decoding: bytes[...]) }

    public var action: SignalAction? {
        switch self {
        case .wake: return nil
        case .payload: return .writePayload
        case .rssi: return .writeRSSI
        case .payloadSharing: return .writePayloadSharing
        case .immediate: return .writeImmediate
        case .unknown(let action, _): return action
        }
    }

    /// The bytes to write; data longer than a 16-bit length field can say is an error.
    public func encoded() throws(SignalWriteError) -> [UInt8] {
        var out = [UInt8]()
        try append(to: &out)
        return out
    }

    public func append(to out: inout [UInt8]) throws(SignalWriteError) {
        func counted(_ action: SignalAction, _ data: [UInt8], header: Int) throws(SignalWriteError) {
            guard data.count <= Self.maximumDataLength else {
                throw SignalWriteError(action: action, expected: header + Self.maximumDataLength, actual: header + data.count, atMost: true)
            }
            out.appendLE16(UInt16(data.count))
            out.append(contentsOf: data)
        }
        switch self {
        case .wake:
            break
        case .payload(let payload):
            out.append(SignalAction.writePayload.rawValue)
            try counted(.writePayload, payload, header: 3)
        case .rssi(let rssi):
            out.append(SignalAction.writeRSSI.rawValue)
            out.appendLE16(UInt16(bitPattern: rssi))
        case .payloadSharing(let rssi, let payloads):
            out.append(SignalAction.writePayloadSharing.rawValue)
            out.appendLE16(UInt16(bitPattern: rssi))
            try counted(.writePayloadSharing, payloads, header: 5)
        case .immediate(let data):
            out.append(SignalAction.writeImmediate.rawValue)
            try counted(.writeImmediate, data, header: 3)
        case .unknown(let action, let data):
            out.append(action.rawValue)
            out.append(contentsOf: data)
        }
    }
}

/// A signal write whose size does not match its action. The node answers it with ATT error
/// 0x0D (Invalid Attribute Value Length), as Herald for iOS does.
public struct SignalWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    public var action: SignalAction
    /// The size the write should have had (a minimum when `bound` is `.atLeast`).
    public var expected: Int
    public var actual: Int
    public var bound: Bound

    public enum Bound: Hashable, Sendable { case exactly, atLeast, atMost }

    /// What the node answers: ATT error Invalid Attribute Value Length (0x0D).
    public static let attError = ATTErrorCode.invalidAttributeValueLength

    public init(action: SignalAction, expected: Int, actual: Int, atLeast: Bool = false, atMost: Bool = false) {
        self.action = action
        self.expected = expected
        self.actual = actual
        self.bound = atLeast ? .atLeast : atMost ? .atMost : .exactly
    }

    public var description: String {
        let what: String
        switch bound {
        case .exactly: what = "exactly"
        case .atLeast: what = "at least"
        case .atMost: what = "at most"
        }
        return "\(action) write is \(actual) bytes; it must be \(what) \(expected)"
    }
}
