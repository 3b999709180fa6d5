/// The controller init sequence as a state machine: it names the next command and reads each
/// result; the owner sends the commands (through an ``HCICommandQueue``) and feeds the results.
///
/// Reset → Read Local Version → Read Local Supported Commands → Set Event Mask → LE Set Event
/// Mask → Write LE Host Supported (only if supported; any failure ignored) → Read BD_ADDR →
/// LE Read Buffer Size (→ Read Buffer Size when it says 0/0 or is unknown) → LE Read Local
/// Supported Features → LE Read Supported States. Ends in a ``ControllerInfo``.
///
/// Reset, version, the event masks, BD_ADDR and a usable buffer size are required; supported
/// commands, LE features and supported states fall back to "all" / none / 0.
public struct ControllerInitializer: Sendable {
    public enum Step: Hashable, Sendable {
        /// Send this command next and pass its result to ``handle(_:_:)``.
        case send(HCICommandPacket)
        case done(ControllerInfo)
        case failed(Failure)
    }

    /// A required command failed (or its answer made no sense).
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public var opcode: HCIOpcode
        public var error: HCICommandError
        public var description: String { "controller init: \(opcode): \(error)" }
    }

    private var version = ReadLocalVersionInformation.ReturnParameters(
        hciVersion: 0, hciRevision: 0, lmpVersion: 0, manufacturer: 0, lmpSubversion: 0)
    private var commands = SupportedCommands.all
    private var address = BluetoothAddress(rawValue: 0)
    private var aclDataLength = 0
    private var aclPacketCount = 0
    private var aclShared = false
    private var features = LEFeatures()
    private var current: HCIOpcode?

    public init() {}

    /// The opcode whose result is awaited, nil before ``start()`` and after the end.
    public var awaiting: HCIOpcode? { current }

    /// Begins (or restarts) the sequence with HCI Reset.
    public mutating func start() -> Step {
        self = ControllerInitializer()
        return send(Reset())
    }

    /// The result of the awaited command. Returns nil (and changes nothing) for any other opcode.
    public mutating func handle(_ opcode: HCIOpcode, _ result: HCICommandResult) -> Step? {
        guard opcode == current else { return nil }
        do {
            return try advance(opcode, result)
        } catch {
            current = nil
            return .failed(Failure(opcode: opcode, error: error))
        }
    }

    private mutating func advance(_ opcode: HCIOpcode, _ result: HCICommandResult) throws(HCICommandError) -> Step {
        switch opcode {
        case .reset:
            try Self.requireSuccess(result)
            return send(ReadLocalVersionInformation())
        case .readLocalVersionInformation:
            version = try ReadLocalVersionInformation.decodeReturn(result)
            return send(ReadLocalSupportedCommands())
        case .readLocalSupportedCommands:
            commands = (try? ReadLocalSupportedCommands.decodeReturn(result)) ?? .all
            return send(SetEventMask())
        case .setEventMask:
            try Self.requireSuccess(result)
            return send(LESetEventMask())
        case .leSetEventMask:
            try Self.requireSuccess(result)
            return commands.writeLEHostSupported ? send(WriteLEHostSupported()) : send(ReadBDAddr())
        case .writeLEHostSupported:
            // LE-only controllers answer "unknown command"; nothing depends on it.
            return send(ReadBDAddr())
        case .readBDAddr:
            address = try ReadBDAddr.decodeReturn(result)
            return send(LEReadBufferSize())
        case .leReadBufferSize:
            if let le = try? LEReadBufferSize.decodeReturn(result), !le.isShared {
                aclDataLength = Int(le.dataLength)
                aclPacketCount = Int(le.packetCount)
                return send(LEReadLocalSupportedFeatures())
            }
            aclShared = true
            return send(ReadBufferSize())
        case .readBufferSize:
            let sizes = try ReadBufferSize.decodeReturn(result)
            guard sizes.aclDataLength > 0, sizes.aclPacketCount > 0 else { throw .failed(.unsupportedFeature) }
            aclDataLength = Int(sizes.aclDataLength)
            aclPacketCount = Int(sizes.aclPacketCount)
            return send(LEReadLocalSupportedFeatures())
        case .leReadLocalSupportedFeatures:
            features = (try? LEReadLocalSupportedFeatures.decodeReturn(result)) ?? []
            return send(LEReadSupportedStates())
        default:  // .leReadSupportedStates, the last step
            let states = (try? LEReadSupportedStates.decodeReturn(result)) ?? 0
            current = nil
            return .done(
                ControllerInfo(
                    address: address, hciVersion: version.hciVersion, hciRevision: version.hciRevision,
                    lmpVersion: version.lmpVersion, lmpSubversion: version.lmpSubversion,
                    manufacturer: version.manufacturer, aclDataLength: aclDataLength, aclPacketCount: aclPacketCount,
                    aclBuffersShared: aclShared, supportedStates: states, leFeatures: features, supportedCommands: commands))
        }
    }

    private mutating func send(_ command: some HCICommand) -> Step {
        current = type(of: command).opcode
        return .send(command.commandPacket)
    }

    private static func requireSuccess(_ result: HCICommandResult) throws(HCICommandError) {
        switch result {
        case .complete(let status, _), .status(let status):
            if !status.isSuccess { throw .failed(status) }
        case .timedOut: throw .timedOut
        case .cancelled: throw .cancelled
        }
    }
}
