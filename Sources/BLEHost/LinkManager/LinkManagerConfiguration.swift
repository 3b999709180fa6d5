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
}
