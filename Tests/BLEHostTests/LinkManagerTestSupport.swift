import Testing
@testable import BLEHost

/// A scripted controller that answers commands like btvirt: enabling what is enabled (or
/// disabling what is disabled) gives 0x0C, parameters cannot change while enabled, a peripheral
/// link ends advertising, LE Create Connection needs scanning off (unless `initiatesWhileScanning`).
/// Its LE Supported States leave out scanning with initiating (bits 22, 23) unless set.
struct FakeController {
    static let statesWithScanningWhileInitiating: UInt64 = 0x03FF_FFFF_FFFF
    var supportedStates: UInt64 = statesWithScanningWhileInitiating & ~(1 << 22 | 1 << 23)
    var initiatesWhileScanning = false
    enum ConnectBehaviour { case connect(handle: UInt16), fail(HCIStatus), never }
    enum CancelBehaviour { case cancels, disallowed }

    var answering = true
    var advertising = false
    /// The type from the last accepted LE Set Advertising Parameters.
    var advertisingType = LEAdvertisingType.connectableUndirected
    var scanning = false
    var connectBehaviour = ConnectBehaviour.connect(handle: 0x0040)
    var cancelBehaviour = CancelBehaviour.cancels
    /// Statuses forced for an opcode (for every use of it).
    var forced: [HCIOpcode: HCIStatus] = [:]
    var initiating: (BluetoothAddress, AddressType)?
    /// Every command received, decoded as opcode and parameters.
    var received: [(opcode: HCIOpcode, parameters: [UInt8])] = []

    static func commandComplete(_ opcode: HCIOpcode, _ params: [UInt8]) -> [UInt8] {
        [0x0E, UInt8(3 + params.count), 0x01, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)] + params
    }

    static func commandStatus(_ opcode: HCIOpcode, _ status: HCIStatus) -> [UInt8] {
        [0x0F, 0x04, status.rawValue, 0x01, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)]
    }

    static func connectionComplete(
        status: HCIStatus = .success, handle: UInt16, role: LERole, peer: BluetoothAddress, type: AddressType
    ) -> [UInt8] {
        [0x3E, 19, 0x01, status.rawValue, UInt8(handle & 0xFF), UInt8(handle >> 8), role.rawValue, type.rawValue]
            + peer.littleEndianBytes + [0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00]
    }

    static func disconnectionComplete(handle: UInt16, reason: HCIStatus) -> [UInt8] {
        [0x05, 0x04, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), reason.rawValue]
    }

    /// Whether a peer could connect to what it advertises now.
    var takesConnections: Bool { advertising && advertisingType.isConnectable }

    /// A central connects to our advertising: advertising stops, as in btvirt. (It does not
    /// check ``takesConnections``: tests also use it for links and for controller races.)
    mutating func peerConnects(handle: UInt16, peer: BluetoothAddress) -> [UInt8] {
        advertising = false
        return Self.connectionComplete(handle: handle, role: .peripheral, peer: peer, type: .random)
    }

    /// The events answering one H4 command packet.
    mutating func receive(_ packet: [UInt8]) -> [[UInt8]] {
        guard packet.count >= 4, packet[0] == 0x01 else {
            Issue.record("not a command: \(Hex.encode(packet))")
            return []
        }
        let opcode = HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8)
        let params = Array(packet[4...])
        received.append((opcode, params))
        guard answering else { return [] }
        if let status = forced[opcode] {
            return opcode == .leCreateConnection || opcode == .disconnect || opcode == .leConnectionUpdate
                ? [Self.commandStatus(opcode, status)] : [Self.commandComplete(opcode, [status.rawValue])]
        }
        let ok = Self.commandComplete(opcode, [0x00])
        let disallowed = Self.commandComplete(opcode, [HCIStatus.commandDisallowed.rawValue])
        switch opcode {
        case .reset:
            advertising = false
            scanning = false
            initiating = nil
            return [ok]
        case .readLocalVersionInformation: return [Self.commandComplete(opcode, InitAnswers.version)]
        case .readLocalSupportedCommands: return [Self.commandComplete(opcode, InitAnswers.supportedCommands(writeLEHostSupported: false))]
        case .readBDAddr: return [Self.commandComplete(opcode, InitAnswers.bdAddr)]
        case .leReadBufferSize: return [Self.commandComplete(opcode, InitAnswers.leBufferSize)]
        case .leReadLocalSupportedFeatures: return [Self.commandComplete(opcode, InitAnswers.leFeatures)]
        case .leReadSupportedStates:
            return [Self.commandComplete(opcode, [0x00] + (0..<8).map { UInt8(truncatingIfNeeded: supportedStates >> (8 * $0)) })]
        case .leSetAdvertisingEnable:
            let on = params.first == 1
            if on == advertising { return [disallowed] }
            advertising = on
            return [ok]
        case .leSetScanEnable:
            let on = params.first == 1
            if on == scanning { return [disallowed] }
            scanning = on
            return [ok]
        case .leSetAdvertisingParameters:
            if advertising { return [disallowed] }
            advertisingType = LEAdvertisingType(rawValue: params[4])
            return [ok]
        case .leSetScanParameters:
            return [scanning ? disallowed : ok]
        case .leSetRandomAddress:
            return [advertising || scanning || initiating != nil ? disallowed : ok]
        case .leCreateConnection:
            guard !scanning || initiatesWhileScanning, initiating == nil else { return [Self.commandStatus(opcode, .commandDisallowed)] }
            let type = AddressType(rawValue: params[5])
            let peer = BluetoothAddress(littleEndianBytes: params[6..<12])
            switch connectBehaviour {
            case .connect(let handle):
                return [Self.commandStatus(opcode, .success), Self.connectionComplete(handle: handle, role: .central, peer: peer, type: type)]
            case .fail(let status):
                return [Self.commandStatus(opcode, .success), Self.connectionComplete(status: status, handle: 0, role: .central, peer: peer, type: type)]
            case .never:
                initiating = (peer, type)
                return [Self.commandStatus(opcode, .success)]
            }
        case .leCreateConnectionCancel:
            guard let (peer, type) = initiating, cancelBehaviour == .cancels else { return [disallowed] }
            initiating = nil
            return [ok, Self.connectionComplete(status: .unknownConnectionIdentifier, handle: 0, role: .central, peer: peer, type: type)]
        case .disconnect:
            return [Self.commandStatus(opcode, .success), Self.disconnectionComplete(handle: UInt16(params[0]) | UInt16(params[1]) << 8, reason: .localHostTerminated)]
        case .leConnectionUpdate:
            return [Self.commandStatus(opcode, .success), [0x3E, 0x0A, 0x03, 0x00, params[0], params[1], params[2], params[3], params[6], params[7], params[8], params[9]]]
        case .leLongTermKeyRequestNegativeReply:
            return [Self.commandComplete(opcode, [0x00, params[0], params[1]])]
        case .readRSSI:
            return [Self.commandComplete(opcode, [0x00, params[0], params[1], 0xC4])]
        default:
            return [ok]
        }
    }
}

/// Drives a ``LinkManager`` against a ``FakeController`` on a manual clock: commands are
/// answered and the answers fed back until nothing moves.
struct LinkHarness {
    var manager: LinkManager
    var controller = FakeController()
    var now = ContinuousClock.now
    /// Every action except `.send`, in order.
    var reported: [LinkManager.Action] = []
    /// Opcodes of the commands sent, in order.
    var sent: [HCIOpcode] = []

    init(_ configuration: LinkManager.Configuration = LinkManager.Configuration(), controller: FakeController = FakeController()) {
        manager = LinkManager(configuration: configuration)
        self.controller = controller
    }

    /// Started and initialised, with the init commands and the `.ready` cleared.
    static func ready(
        _ configuration: LinkManager.Configuration = LinkManager.Configuration(), controller: FakeController = FakeController()
    ) -> LinkHarness {
        var harness = LinkHarness(configuration, controller: controller)
        harness.perform { $0.start(now: $1, into: &$2) }
        #expect(harness.manager.controllerInfo != nil)
        harness.clear()
        return harness
    }

    mutating func perform(_ body: (inout LinkManager, ContinuousClock.Instant, inout [LinkManager.Action]) -> Void) {
        var actions: [LinkManager.Action] = []
        body(&manager, now, &actions)
        drain(actions)
    }

    /// An event the controller sends on its own.
    mutating func inject(_ event: [UInt8]) {
        do {
            let decoded = try HCIEvent(decoding: event)
            perform { $0.handle(decoded, now: $1, into: &$2) }
        } catch {
            Issue.record("bad event \(Hex.encode(event)): \(error)")
        }
    }

    mutating func advance(_ duration: Duration) {
        now = now + duration
        perform { $0.tick(now: $1, into: &$2) }
    }

    /// Advances in steps of `step` up to `total`, ticking at every step.
    mutating func run(for total: Duration, step: Duration) {
        var elapsed = Duration.zero
        while elapsed < total {
            advance(step)
            elapsed += step
        }
    }

    mutating func clear() {
        reported.removeAll()
        sent.removeAll()
    }

    private mutating func drain(_ initial: [LinkManager.Action]) {
        var actions = initial
        var events: [[UInt8]] = []
        while true {
            for action in actions {
                if case .send(let packet) = action {
                    sent.append(HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8))
                    events += controller.receive(packet)
                } else {
                    reported.append(action)
                }
            }
            actions.removeAll()
            guard !events.isEmpty else { return }
            let event = events.removeFirst()
            do {
                let decoded = try HCIEvent(decoding: event)
                manager.handle(decoded, now: now, into: &actions)
            } catch {
                Issue.record("bad event \(Hex.encode(event)): \(error)")
            }
        }
    }
}
