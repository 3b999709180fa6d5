/// What the application asks of the host: its GATT database, and whether it advertises and scans.
public struct HostConfiguration: Sendable {
    /// Our GATT server (GAP and GATT services plus the application's).
    public var database: GATTDatabase
    /// Legacy advertising, if wanted; re-enabled after each peripheral connection opens or closes.
    public var advertising: AdvertisingConfiguration?
    /// Continuous scanning, if wanted (duplicates never filtered).
    public var scanning: LESetScanParameters?
    /// Timeouts, the connection cap, the health probe: see ``LinkManager/Configuration``.
    public var linkManager: LinkManager.Configuration
    /// Checks every write to our characteristics before it is accepted (see ``TimedGATTWriteValidator``).
    public var validateWrite: TimedGATTWriteValidator
    /// Whether the configured advertising and scanning start switched on (a venue closed at
    /// start never advertises); ``HostRequest/setRadio(advertising:scanning:)`` changes it.
    public var switchedOn: RadioState
    /// How long a GATT client request of ours (``HostRequest/gatt(_:link:)``) waits for the
    /// peer's response: past it the procedure fails with ``GATTClientError/timedOut`` and the
    /// link is closed (its ATT bearer is dead). ATT's own transaction timeout, 30 s, by default
    /// and at most; a node reading phones chooses shorter, so a peer that never answers does not
    /// hold a link for half a minute.
    public var requestTimeout: Duration
    /// Phones' links (we are peripheral): the idle limit and the backoff of an address dropped
    /// for idleness (see ``InboundLinkGuard``). Off by default.
    public var inboundLinks: InboundLinkGuard.Configuration

    public init(
        database: GATTDatabase, advertising: AdvertisingConfiguration? = nil, scanning: LESetScanParameters? = nil,
        linkManager: LinkManager.Configuration = .init(),
        validateWrite: @escaping TimedGATTWriteValidator = { _, _ in nil },
        switchedOn: RadioState = RadioState(advertising: true, scanning: true),
        requestTimeout: Duration = ATTBearer.transactionTimeout,
        inboundLinks: InboundLinkGuard.Configuration = .init()
    ) {
        self.requestTimeout = requestTimeout
        self.inboundLinks = inboundLinks
        self.database = database
        self.advertising = advertising
        self.scanning = scanning
        self.linkManager = linkManager
        self.validateWrite = validateWrite
        self.switchedOn = switchedOn
    }
}

/// Identifies a request to the host, so its reply finds the caller.
public struct HostRequestID: Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
}

/// A request from the layers above, carried out by the host's thread.
public enum HostRequest: Sendable {
    /// Reply with the controller's identity and capabilities once it is initialised.
    case controllerInfo
    /// Connect as central; the attempt is given up `timeout` from now, queued or running (its
    /// one deadline, kept by the link manager), and fails with 0x08. A request for a peer already
    /// being connected to joins that attempt.
    case connect(BluetoothAddress, AddressType, timeout: Duration)
    case disconnect(link: UInt16)
    case gatt(GATTClientProcedure, link: UInt16)
    case writeWithoutResponse([UInt8], handle: UInt16, link: UInt16)
    /// Replace a dynamic value of our database and notify subscribed peers.
    case setValue([UInt8], handle: UInt16)
    /// Switch the configured advertising and scanning on or off (e.g. outside opening hours).
    /// The switches outlast controller restarts; open links stay.
    case setRadio(advertising: Bool, scanning: Bool)
}

public enum HostReply: Sendable {
    case done
    case controllerInfo(ControllerInfo)
    case link(HostLink)
    case gatt(GATTClientResult)
}

/// Why a request failed.
public enum HostError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The host is not running (not started, stopped, or never got the controller).
    case notRunning
    /// The controller session ended (reset, transport lost) before the request completed.
    case sessionEnded(String)
    case connectionFailed(HCIStatus)
    case noSuchLink(UInt16)
    case gatt(GATTClientError)
    case database(GATTDatabaseError)
    case unexpectedReply

    public var description: String {
        switch self {
        case .notRunning: return "the Bluetooth host is not running"
        case .sessionEnded(let reason): return "the controller session ended: \(reason)"
        case .connectionFailed(let status): return "connection failed: \(status)"
        case .noSuchLink(let handle): return "no link with handle \(handle)"
        case .gatt(let error): return "GATT: \(error)"
        case .database(let error): return "GATT database: \(error)"
        case .unexpectedReply: return "unexpected reply from the host"
        }
    }
}

/// A connection as the application sees it.
public struct HostLink: Hashable, Sendable, CustomStringConvertible {
    public var handle: UInt16
    public var peerAddress: BluetoothAddress
    public var peerAddressType: AddressType
    public var role: LERole

    public init(handle: UInt16, peerAddress: BluetoothAddress, peerAddressType: AddressType, role: LERole) {
        self.handle = handle
        self.peerAddress = peerAddress
        self.peerAddressType = peerAddressType
        self.role = role
    }

    public var description: String { "link \(handle) to \(peerAddress) (\(peerAddressType), we are \(role))" }
}

/// Where the host stands with its controller: the session's lifecycle, not what the radio does
/// (``RadioState``); the venue node sums both up as Herald's `RadioCondition`.
public enum BluetoothState: Hashable, Sendable {
    /// Opening the transport (`hci0`, `unix:/…`).
    case opening(String)
    /// Initialised and working.
    case ready
    /// The session ended (reason) and the controller will be reopened.
    case recovering(String)
    /// The controller could not be opened (reason); retried with backoff.
    case unavailable(String)
}

/// What the radio is doing (or, as `switchedOn`, should do): independent flags the host both
/// reports and is told, unlike the session's ``BluetoothState``.
public struct RadioState: Hashable, Sendable {
    public var advertising: Bool
    public var scanning: Bool
    /// Scanning goes on while a connection is being made (the controller supports it; see
    /// ``LinkManager``). Reported only; ignored where a `RadioState` says what to switch on.
    public var scansWhileConnecting: Bool

    public init(advertising: Bool, scanning: Bool, scansWhileConnecting: Bool = false) {
        self.advertising = advertising
        self.scanning = scanning
        self.scansWhileConnecting = scansWhileConnecting
    }
}

/// Everything the host reports to the layers above.
public enum HostEvent: Sendable {
    case state(BluetoothState)
    /// The controller started or stopped advertising or scanning (as the link manager believes).
    case radio(RadioState)
    case advertisingReport(LEAdvertisingReport)
    case connected(HostLink)
    case disconnected(HostLink, reason: HCIStatus)
    /// A peer wrote one of our characteristics (already accepted).
    case gattWrite(GATTWrite)
    /// The write validator refused a peer's write with this ATT error (already answered; for a
    /// Write Command, dropped). Nothing changed; the write carries its writer as ``gattWrite``'s does.
    case gattWriteRefused(GATTWrite, ATTErrorCode)
    case subscriptionChanged(GATTSubscription)
    /// A peer's server notified or indicated a value on a link.
    case notification(link: UInt16, handle: UInt16, value: [UInt8])

    /// Names the event in drop counts.
    public var kind: String {
        switch self {
        case .state, .radio: return "state"
        case .advertisingReport: return "advertising report"
        case .connected, .disconnected: return "connection"
        case .gattWrite, .gattWriteRefused: return "GATT write"
        case .subscriptionChanged: return "subscription"
        case .notification: return "notification"
        }
    }
}

/// What the engine asks its owner to do, in order.
public enum HostAction: Sendable {
    case send(H4Packet)
    case emit(HostEvent)
    case reply(HostRequestID, Result<HostReply, HostError>)
    /// The controller is unusable (command timeout, hardware error): end the session and reopen.
    case restart(String)
}
