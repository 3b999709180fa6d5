/// An HCI command: a fixed opcode and its parameters. Each command is one small struct that
/// encodes its own parameters; ``packet`` adds the H4 and HCI headers.
public protocol HCICommand: Sendable {
    static var opcode: HCIOpcode { get }
    /// Appends the command parameters (without the HCI header) in wire order.
    func encodeParameters(into bytes: inout [UInt8])
}

/// A command whose Command Complete carries return parameters after the status byte.
public protocol HCICommandWithReturnParameters: HCICommand {
    associatedtype ReturnParameters: Hashable, Sendable
    /// Decodes the return parameters that follow the status byte of a successful Command Complete.
    /// Extra trailing bytes are accepted (a newer controller may add fields).
    static func decodeReturnParameters(_ bytes: ArraySlice<UInt8>) throws(DecodeError) -> ReturnParameters
}

extension HCICommand {
    /// The H4 command packet: `01 | opcode LE | parameter length | parameters`.
    public var packet: [UInt8] {
        var out: [UInt8] = [0x01, 0, 0, 0]
        encodeParameters(into: &out)
        let opcode = Self.opcode.rawValue
        out[1] = UInt8(truncatingIfNeeded: opcode)
        out[2] = UInt8(truncatingIfNeeded: opcode >> 8)
        // Every command here has at most 32 parameter bytes; the length byte cannot overflow.
        out[3] = UInt8(truncatingIfNeeded: out.count - 4)
        return out
    }

    /// The command as a value the ``HCICommandQueue`` can carry.
    public var commandPacket: HCICommandPacket { HCICommandPacket(opcode: Self.opcode, packet: packet) }
}

extension HCICommandWithReturnParameters {
    /// The return parameters from a command's result, or why there are none.
    public static func decodeReturn(_ result: HCICommandResult) throws(HCICommandError) -> ReturnParameters {
        switch result {
        case .complete(let status, let parameters):
            guard status.isSuccess else { throw .failed(status) }
            do {
                return try decodeReturnParameters(parameters)
            } catch {
                throw .malformed(error)
            }
        case .status(let status):
            throw status.isSuccess ? .unexpectedCommandStatus : .failed(status)
        case .timedOut:
            throw .timedOut
        case .cancelled:
            throw .cancelled
        }
    }
}

/// An encoded command ready to send, with its opcode for matching the completion.
public struct HCICommandPacket: Hashable, Sendable, CustomStringConvertible {
    public var opcode: HCIOpcode
    /// The H4 packet (type byte 0x01 included).
    public var packet: [UInt8]

    public init(opcode: HCIOpcode, packet: [UInt8]) {
        self.opcode = opcode
        self.packet = packet
    }

    public init(_ command: some HCICommand) { self = command.commandPacket }

    public var description: String { "\(opcode) \(Hex.encode(packet))" }
}

/// How a command ended, as reported by the ``HCICommandQueue``.
public enum HCICommandResult: Hashable, Sendable {
    /// Command Complete: its status and the return parameters after the status byte.
    case complete(status: HCIStatus, parameters: ArraySlice<UInt8>)
    /// Command Status: with success the command goes on and ends in a later event.
    case status(HCIStatus)
    /// No Command Complete/Status within the queue's timeout.
    case timedOut
    /// Dropped before completion (the queue was reset).
    case cancelled

    /// The controller's status, if it answered.
    public var status: HCIStatus? {
        switch self {
        case .complete(let status, _), .status(let status): return status
        case .timedOut, .cancelled: return nil
        }
    }

    /// True when the controller answered with status success.
    public var isSuccess: Bool { status == .success }
}

/// Why a command produced no usable return parameters.
public enum HCICommandError: Error, Hashable, Sendable, CustomStringConvertible {
    case failed(HCIStatus)
    case timedOut
    case cancelled
    /// Command Status success arrived where Command Complete was expected.
    case unexpectedCommandStatus
    case malformed(DecodeError)

    public var description: String {
        switch self {
        case .failed(let status): return "command failed: \(status)"
        case .timedOut: return "command timed out"
        case .cancelled: return "command cancelled"
        case .unexpectedCommandStatus: return "Command Status where Command Complete was expected"
        case .malformed(let error): return "malformed return parameters: \(error)"
        }
    }
}

// MARK: The controller side (a simulated controller receives commands and answers them)

/// A command a controller can decode from its parameters: the other direction of
/// ``HCICommand/encodeParameters(into:)``.
public protocol HCIDecodableCommand: HCICommand {
    /// Decodes the parameters (after the HCI command header). Extra trailing bytes throw.
    init(parameters: ArraySlice<UInt8>) throws(DecodeError)
}

/// A command whose return parameters a controller can encode: the other direction of
/// ``HCICommandWithReturnParameters/decodeReturnParameters(_:)``.
public protocol HCIReturnParametersEncoding: HCICommandWithReturnParameters {
    /// Appends the return parameters that follow the status byte.
    static func encodeReturnParameters(_ parameters: ReturnParameters, into bytes: inout [UInt8])
}

/// A command packet as a controller receives it: its opcode and parameter bytes.
public struct HCIReceivedCommand: Hashable, Sendable {
    public var opcode: HCIOpcode
    /// Shares the packet's storage.
    public var parameters: ArraySlice<UInt8>

    /// From an H4 command packet body (without the type byte): opcode, length, parameters.
    public init(body: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(body)
        opcode = HCIOpcode(rawValue: try r.readLE16("Command_Opcode"))
        let length = Int(try r.readU8("Parameter_Total_Length"))
        parameters = try r.readBytes(length, "command parameters")
        try r.expectEnd("command packet")
    }

    /// Decodes the parameters as `C` (whose opcode the caller has matched).
    public func decode<C: HCIDecodableCommand>(_ type: C.Type) throws(DecodeError) -> C {
        try C(parameters: parameters)
    }
}

extension HCIDecodableCommand {
    /// For commands without parameters: accepts only an empty parameter list.
    static func expectNoParameters(_ parameters: ArraySlice<UInt8>) throws(DecodeError) {
        try ByteReader(parameters).expectEnd("command parameters")
    }
}
