/// Command Complete (0x0E): a command finished. `numberOfCommands` is how many commands the
/// controller accepts now (ncmd); opcode 0x0000 only hands out credits.
public struct CommandComplete: Hashable, Sendable {
    public var numberOfCommands: UInt8
    public var opcode: HCIOpcode
    /// Everything after the opcode; for real commands the status comes first.
    public var returnParameters: ArraySlice<UInt8>

    public init(numberOfCommands: UInt8, opcode: HCIOpcode, returnParameters: ArraySlice<UInt8>) {
        self.numberOfCommands = numberOfCommands
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        numberOfCommands = try r.readU8("Num_HCI_Command_Packets")
        opcode = HCIOpcode(rawValue: try r.readLE16("Command_Opcode"))
        returnParameters = r.readRest()
    }

    /// The command's result: status and the parameters after it. A Command Complete without
    /// return parameters (not allowed for real commands) reads as "unspecified error".
    public var result: HCICommandResult {
        guard let first = returnParameters.first else { return .complete(status: .unspecifiedError, parameters: returnParameters) }
        return .complete(status: HCIStatus(rawValue: first), parameters: returnParameters.dropFirst())
    }
}

/// Command Status (0x0F): the controller accepted a command that completes later (status 0)
/// or refused it (any other status).
public struct CommandStatus: Hashable, Sendable {
    public var status: HCIStatus
    public var numberOfCommands: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numberOfCommands: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numberOfCommands = numberOfCommands
        self.opcode = opcode
    }

    public init(parameters: ArraySlice<UInt8>) throws(DecodeError) {
        var r = ByteReader(parameters)
        status = HCIStatus(rawValue: try r.readU8("Status"))
        numberOfCommands = try r.readU8("Num_HCI_Command_Packets")
        opcode = HCIOpcode(rawValue: try r.readLE16("Command_Opcode"))
    }
}

extension CommandComplete {
    /// Status only (commands without return parameters, or a failed command).
    public init(opcode: HCIOpcode, status: HCIStatus, numberOfCommands: UInt8 = 1) {
        self.init(numberOfCommands: numberOfCommands, opcode: opcode, returnParameters: [status.rawValue][...])
    }

    /// A successful `C` with its return parameters.
    public init<C: HCIReturnParametersEncoding>(_ command: C.Type, returning parameters: C.ReturnParameters, numberOfCommands: UInt8 = 1) {
        var bytes: [UInt8] = [HCIStatus.success.rawValue]
        C.encodeReturnParameters(parameters, into: &bytes)
        self.init(numberOfCommands: numberOfCommands, opcode: C.opcode, returnParameters: bytes[...])
    }

    public var packet: H4Packet {
        var p: [UInt8] = [numberOfCommands]
        p.appendLE16(opcode.rawValue)
        p.append(contentsOf: returnParameters)
        return HCIEventCode.commandComplete.packet(parameters: p)
    }
}

extension CommandStatus {
    public var packet: H4Packet {
        var p: [UInt8] = [status.rawValue, numberOfCommands]
        p.appendLE16(opcode.rawValue)
        return HCIEventCode.commandStatus.packet(parameters: p)
    }
}
