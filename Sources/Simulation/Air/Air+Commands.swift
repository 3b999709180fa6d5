import BLEHost
import Herald

/// The node controller's state, as the host's commands set it.
struct ControllerState: Sendable {
    var eventMask: HCIEventMask = HCIEventMask(rawValue: 0x0000_1FFF_FFFF_FFFF)
    var leEventMask: LEEventMask = LEEventMask(rawValue: 0x1F)
    var randomAddress: BluetoothAddress?
    var advertising = LESetAdvertisingParameters()
    var advertisingData = AdvertisingPayload.empty
    var scanResponse = AdvertisingPayload.empty
    var advertisingEnabled = false
    var scan = LESetScanParameters()
    var scanning = false
    var scanStartedAt = 0.0
    var initiating: LECreateConnection?

    /// Advertising that a phone can connect to.
    var isConnectableAdvertising: Bool { advertisingEnabled && advertising.type.isConnectable }

    /// Connectable advertising that shows the Herald service (current or legacy), in the advert
    /// or the scan response: what makes a Herald phone connect.
    var advertisesHerald: Bool {
        guard isConnectableAdvertising else { return false }
        return [advertisingData, scanResponse].contains { payload in
            let uuids = AdvertisingData(payload.bytes[...]).serviceUUIDs
            return uuids.contains(HeraldUUIDs.service) || uuids.contains(HeraldUUIDs.legacyService)
        }
    }
}

extension Air {
    /// What the node controller answers about itself.
    static let version = ReadLocalVersionInformation.ReturnParameters(
        hciVersion: 0x08, hciRevision: 0x0100, lmpVersion: 0x08, manufacturer: 0x0131, lmpSubversion: 0x0001)
    /// Every legacy LE state and combination (bits 0–41).
    static let supportedStates: UInt64 = 0x3FF_FFFF_FFFF

    /// One packet from the node's host: a command or ACL data. Anything else is ignored, as a
    /// controller ignores what it cannot parse.
    public mutating func send(_ packet: H4Packet) {
        switch packet.type {
        case .command:
            counters.commands += 1
            guard let command = try? HCIReceivedCommand(body: packet.body[...]) else {
                counters.commandsRefused += 1
                return
            }
            execute(command)
        case .acl:
            aclFromHost(packet.body)
        default:
            break
        }
    }

    private mutating func complete(_ opcode: HCIOpcode, _ status: HCIStatus = .success) {
        if status != .success { counters.commandsRefused += 1 }
        outbox.append(CommandComplete(opcode: opcode, status: status).packet)
    }

    private mutating func complete<C: HCIReturnParametersEncoding>(_ type: C.Type, _ parameters: C.ReturnParameters) {
        outbox.append(CommandComplete(type, returning: parameters).packet)
    }

    private mutating func commandStatus(_ opcode: HCIOpcode, _ status: HCIStatus = .success) {
        if status != .success { counters.commandsRefused += 1 }
        outbox.append(CommandStatus(status: status, numberOfCommands: 1, opcode: opcode).packet)
    }

    private var isBusy: Bool { controller.advertisingEnabled || controller.scanning || controller.initiating != nil }

    private mutating func execute(_ command: HCIReceivedCommand) {
        let op = command.opcode
        do {
            switch op {
            case .reset:
                _ = try command.decode(Reset.self)
                reset()
                complete(op)
            case .setEventMask:
                controller.eventMask = try command.decode(SetEventMask.self).mask
                complete(op)
            case .leSetEventMask:
                controller.leEventMask = try command.decode(LESetEventMask.self).mask
                complete(op)
            case .writeLEHostSupported:
                _ = try command.decode(WriteLEHostSupported.self)
                complete(op)
            case .readLocalVersionInformation:
                _ = try command.decode(ReadLocalVersionInformation.self)
                complete(ReadLocalVersionInformation.self, Self.version)
            case .readLocalSupportedCommands:
                _ = try command.decode(ReadLocalSupportedCommands.self)
                complete(ReadLocalSupportedCommands.self, .all)
            case .readBufferSize:
                _ = try command.decode(ReadBufferSize.self)
                complete(
                    ReadBufferSize.self,
                    .init(
                        aclDataLength: configuration.aclDataLength, scoDataLength: 0,
                        aclPacketCount: UInt16(configuration.aclPacketCount), scoPacketCount: 0))
            case .leReadBufferSize:
                _ = try command.decode(LEReadBufferSize.self)
                complete(
                    LEReadBufferSize.self, .init(dataLength: configuration.aclDataLength, packetCount: configuration.aclPacketCount))
            case .readBDAddr:
                _ = try command.decode(ReadBDAddr.self)
                complete(ReadBDAddr.self, configuration.nodeAddress)
            case .leReadLocalSupportedFeatures:
                _ = try command.decode(LEReadLocalSupportedFeatures.self)
                complete(LEReadLocalSupportedFeatures.self, [.encryption])
            case .leReadSupportedStates:
                _ = try command.decode(LEReadSupportedStates.self)
                complete(LEReadSupportedStates.self, Self.supportedStates)
            case .leSetRandomAddress:
                let address = try command.decode(LESetRandomAddress.self).address
                guard !isBusy else { return complete(op, .commandDisallowed) }
                controller.randomAddress = address
                complete(op)
            case .leSetAdvertisingParameters:
                let p = try command.decode(LESetAdvertisingParameters.self)
                guard !controller.advertisingEnabled else { return complete(op, .commandDisallowed) }
                guard p.intervalMin <= p.intervalMax, p.intervalMin >= 0x0020, p.intervalMax <= 0x4000, p.channelMap & 0x07 != 0
                else { return complete(op, .invalidParameters) }
                controller.advertising = p
                complete(op)
            case .leSetAdvertisingData:
                controller.advertisingData = try command.decode(LESetAdvertisingData.self).data
                complete(op)
            case .leSetScanResponseData:
                controller.scanResponse = try command.decode(LESetScanResponseData.self).data
                complete(op)
            case .leSetAdvertisingEnable:
                let enabled = try command.decode(LESetAdvertisingEnable.self).enabled
                if enabled, controller.advertising.ownAddressType == .random, controller.randomAddress == nil {
                    return complete(op, .invalidParameters)
                }
                controller.advertisingEnabled = enabled
                complete(op)
            case .leSetScanParameters:
                let p = try command.decode(LESetScanParameters.self)
                guard !controller.scanning else { return complete(op, .commandDisallowed) }
                guard p.window <= p.interval, p.window >= 0x0004, p.interval <= 0x4000 else { return complete(op, .invalidParameters) }
                controller.scan = p
                complete(op)
            case .leSetScanEnable:
                let enable = try command.decode(LESetScanEnable.self)
                if enable.enabled, !controller.scanning { controller.scanStartedAt = now }
                controller.scanning = enable.enabled
                if !enable.enabled { pendingReports.removeAll() }
                complete(op)
            case .leCreateConnection:
                let create = try command.decode(LECreateConnection.self)
                guard controller.initiating == nil else { return commandStatus(op, .commandDisallowed) }
                guard create.connection.isValid, !create.useFilterAcceptList else { return commandStatus(op, .invalidParameters) }
                controller.initiating = create
                commandStatus(op)
            case .leCreateConnectionCancel:
                _ = try command.decode(LECreateConnectionCancel.self)
                guard let initiating = controller.initiating else { return complete(op, .commandDisallowed) }
                controller.initiating = nil
                complete(op)
                counters.connectionsCancelled += 1
                connectionComplete(
                    LEConnectionComplete(
                        status: .unknownConnectionIdentifier, handle: 0, role: .central,
                        peerAddressType: initiating.peerAddressType, peerAddress: initiating.peerAddress))
            case .leConnectionUpdate:
                let update = try command.decode(LEConnectionUpdate.self)
                guard var link = links[update.handle] else { return commandStatus(op, .unknownConnectionIdentifier) }
                guard update.parameters.isValid else { return commandStatus(op, .invalidParameters) }
                commandStatus(op)
                link.interval = Double(update.parameters.intervalMax) * 0.001_25
                links[update.handle] = link
                let event = LEConnectionUpdateComplete(
                    status: .success, handle: update.handle, interval: update.parameters.intervalMax, latency: update.parameters.latency,
                    supervisionTimeout: update.parameters.supervisionTimeout)
                if controller.leEventMask.contains(.connectionUpdateComplete) {
                    schedule(.toHost(event.packet), at: now + 6 * link.interval)
                }
            case .disconnect:
                let disconnect = try command.decode(Disconnect.self)
                guard let link = links[disconnect.handle] else { return commandStatus(op, .unknownConnectionIdentifier) }
                commandStatus(op)
                closeLink(disconnect.handle)
                schedule(
                    .toHost(DisconnectionComplete(handle: disconnect.handle, reason: .localHostTerminated).packet),
                    at: now + link.interval)
            case .readRSSI:
                let handle = try command.decode(ReadRSSI.self).handle
                guard let link = links[handle] else { return complete(op, .unknownConnectionIdentifier) }
                complete(ReadRSSI.self, .init(handle: handle, rssi: Int8(clamping: linkRSSI(link))))
            case .leLongTermKeyRequestNegativeReply:
                let handle = try command.decode(LELongTermKeyRequestNegativeReply.self).handle
                complete(LELongTermKeyRequestNegativeReply.self, handle)
            default:
                complete(op, .unknownCommand)
            }
        } catch {
            complete(op, .invalidParameters)
        }
    }

    /// The controller is lost (unplugged, its power gone): everything off and its links gone, as
    /// a reset leaves it, and nothing it had for the host arrives. The host finds it again with a
    /// reset, as at any start.
    public mutating func controllerLost() {
        reset()
        outbox.removeAll()
    }

    /// Reset: everything off, links gone (without events, as after a real reset).
    private mutating func reset() {
        controller = ControllerState()
        pendingReports.removeAll()
        pendingReportBytes = 0
        for handle in Array(links.keys) { closeLink(handle) }
    }

    mutating func connectionComplete(_ event: LEConnectionComplete) {
        guard controller.eventMask.contains(.leMeta), controller.leEventMask.contains(.connectionComplete) else { return }
        outbox.append(event.packet)
    }
}
