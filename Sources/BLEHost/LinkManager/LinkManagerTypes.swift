/// An open LE link as the link manager knows it.
public struct LELink: Hashable, Sendable {
    public var handle: UInt16
    /// Central: we connected to the peer. Peripheral: the peer connected to our advertising.
    public var role: LERole
    public var peerAddress: BluetoothAddress
    public var peerAddressType: AddressType
    /// Units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(
        handle: UInt16, role: LERole, peerAddress: BluetoothAddress, peerAddressType: AddressType, interval: UInt16,
        latency: UInt16, supervisionTimeout: UInt16
    ) {
        self.handle = handle
        self.role = role
        self.peerAddress = peerAddress
        self.peerAddressType = peerAddressType
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// What to advertise: legacy advertising parameters, advertising data and scan response.
public struct AdvertisingConfiguration: Hashable, Sendable {
    public var parameters: LESetAdvertisingParameters
    public var data: AdvertisingPayload
    public var scanResponse: AdvertisingPayload

    public init(
        parameters: LESetAdvertisingParameters = LESetAdvertisingParameters(), data: AdvertisingPayload,
        scanResponse: AdvertisingPayload = .empty
    ) {
        self.parameters = parameters
        self.data = data
        self.scanResponse = scanResponse
    }
}

extension LinkManager {
    public struct Configuration: Hashable, Sendable {
        /// How long any command may wait for its Command Complete/Status before the controller
        /// is declared unresponsive (and a reset is asked for).
        public var commandTimeout: Duration
        /// A connection attempt whose caller gave no timeout is given up after this long
        /// (Herald's default: 12 s).
        public var connectTimeout: Duration
        /// At most this many links at once, counting our own attempt: no attempts beyond it,
        /// advertising stops taking connections while an attempt or a new link could exceed it,
        /// and a peer that connects beyond it all the same is disconnected.
        public var maximumConnections: Int
        /// After this long without any event, the controller is probed with Read Local Version
        /// (and scanning is re-asserted). Only a probe that goes unanswered asks for a reset.
        public var silenceBeforeProbe: Duration
        /// First delay before retrying a failed advertising/scanning command; doubles up to 64×.
        public var retryDelay: Duration
        /// Used by LE Create Connection.
        public var connectionParameters: LEConnectionParameters
        public var initiatorScanInterval: UInt16
        public var initiatorScanWindow: UInt16
        /// Our address type in LE Create Connection (random if ``randomAddress`` is set).
        public var ownAddressType: AddressType
        /// A static random address to set after every controller init, before anything else.
        public var randomAddress: BluetoothAddress?

        public init(
            commandTimeout: Duration = .seconds(3), connectTimeout: Duration = .seconds(12), maximumConnections: Int = 4,
            silenceBeforeProbe: Duration = .seconds(60), retryDelay: Duration = .seconds(1),
            connectionParameters: LEConnectionParameters = LEConnectionParameters(), initiatorScanInterval: UInt16 = 0x0060,
            initiatorScanWindow: UInt16 = 0x0060, ownAddressType: AddressType = .public, randomAddress: BluetoothAddress? = nil
        ) {
            self.commandTimeout = commandTimeout
            self.connectTimeout = connectTimeout
            self.maximumConnections = maximumConnections
            self.silenceBeforeProbe = silenceBeforeProbe
            self.retryDelay = retryDelay
            self.connectionParameters = connectionParameters
            self.initiatorScanInterval = initiatorScanInterval
            self.initiatorScanWindow = initiatorScanWindow
            self.ownAddressType = randomAddress == nil ? ownAddressType : .random
            self.randomAddress = randomAddress
        }
    }

    /// Why the link manager asks its owner to reset and reopen the controller.
    public enum ResetReason: Hashable, Sendable, CustomStringConvertible {
        /// A command (possibly the health probe) got no answer within the command timeout.
        case commandTimeout(HCIOpcode)
        /// The controller reported a Hardware Error event.
        case hardwareError(code: UInt8)

        public var description: String {
            switch self {
            case .commandTimeout(let opcode): return "no answer to \(opcode)"
            case .hardwareError(let code): return "hardware error 0x\(Hex.encode([code]))"
            }
        }
    }

    /// What the owner must do or may want to know, in order.
    public enum Action: Hashable, Sendable {
        /// Write this H4 command packet to the controller.
        case send([UInt8])
        /// The init sequence finished: the controller is ready.
        case ready(ControllerInfo)
        /// The init sequence failed; ``LinkManager/start(now:into:)`` may be tried again later.
        case initializationFailed(ControllerInitializer.Failure)
        /// Reset and reopen the controller, then call ``LinkManager/start(now:into:)``. Links
        /// were closed and commands cancelled already.
        case resetController(ResetReason)
        /// Advertising reports to classify.
        case advertisingReports(LEAdvertisingReports)
        case connectionOpened(LELink)
        /// A peer connected to our advertising while every link was taken (the controller
        /// accepted it before advertising stopped taking connections): it is being disconnected
        /// with 0x14 and is never reported opened or closed. For logs and counters.
        case connectionRefused(LELink)
        /// A connection attempt ended without a link: `status` 0x08 at its deadline (queued, or
        /// cancelled while running), 0x09 refused at the connection cap, 0x3E failed to
        /// establish, 0x16 the controller was reset, or the controller's refusal.
        case connectionFailed(peer: BluetoothAddress, addressType: AddressType, status: HCIStatus)
        /// `reason` from Disconnection Complete, or 0x16 when the controller was reset.
        case connectionClosed(LELink, reason: HCIStatus)
        /// New connection parameters are in force on this link.
        case connectionUpdated(LELink)
        /// The result of a command sent with ``LinkManager/send(_:now:into:)``.
        case commandResult(HCICommandQueue.Token, HCIOpcode, HCICommandResult)
        /// One of the link manager's own commands failed (for logs); it retries if that makes sense.
        case commandFailed(HCIOpcode, HCIStatus)
    }
}
