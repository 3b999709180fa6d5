import BLEHost

/// How the simulated air and the node's virtual controller behave.
public struct AirConfiguration: Sendable, Equatable {
    public var radio: RadioModel
    /// The node controller's public address (BD_ADDR), in the Raspberry Pi range.
    public var nodeAddress: BluetoothAddress
    /// The node controller's LE ACL buffers: small, as on a Pi's UART controller, so the host's
    /// flow control is exercised.
    public var aclDataLength: UInt16
    public var aclPacketCount: UInt8
    /// Chance that a connection attempt that found its peer fails to be established (0x3E).
    public var connectionFailure: Double
    /// Advertising reports heard within this many seconds of the first go out in one event.
    public var reportBatchWindow: Double
    /// A phone's link layer stops trying this long after it left range (supervision timeout), seconds.
    public var supervisionTimeout: Double
    /// How often a phone that cannot advertise writes its payload again (Herald: every 5 min).
    public var writerPayloadInterval: Double
    /// Herald phones connect to the node once per stay to read the venue's payload (what makes
    /// them log the check-in), as Herald does with any Herald device it finds.
    public var phonesReadVenue: Bool
    /// Chance that a phone the node connects to asks for other connection parameters (an L2CAP
    /// Connection Parameter Update Request), as Android phones often do.
    public var parameterRequestChance: Double

    public init(
        radio: RadioModel = RadioModel(), nodeAddress: BluetoothAddress = BluetoothAddress(rawValue: 0xB827_EB00_0001),
        aclDataLength: UInt16 = 27, aclPacketCount: UInt8 = 4, connectionFailure: Double = 0.05,
        reportBatchWindow: Double = 0.010, supervisionTimeout: Double = 5, writerPayloadInterval: Double = 300,
        phonesReadVenue: Bool = true, parameterRequestChance: Double = 0.3
    ) {
        self.radio = radio
        self.nodeAddress = nodeAddress
        self.aclDataLength = aclDataLength
        self.aclPacketCount = aclPacketCount
        self.connectionFailure = connectionFailure
        self.reportBatchWindow = reportBatchWindow
        self.supervisionTimeout = supervisionTimeout
        self.writerPayloadInterval = writerPayloadInterval
        self.phonesReadVenue = phonesReadVenue
        self.parameterRequestChance = parameterRequestChance
    }
}

/// What happened on the air, for tests, the status line and the report.
public struct AirCounters: Sendable, Equatable {
    /// Adverts that reached the node's antenna, and of those the ones reported to the host.
    public var advertsHeard = 0
    public var advertsReported = 0
    public var reportEvents = 0
    public var commands = 0
    /// Commands the controller refused (disallowed, invalid, unknown, malformed).
    public var commandsRefused = 0
    public var connectionsEstablished = 0
    public var connectionsFailed = 0
    public var connectionsCancelled = 0
    /// Links that ended because the phone walked out of range.
    public var linksLost = 0
    public var aclToPhones = 0
    public var aclToNode = 0
    /// Writes phones received on their signal characteristic (payload sharing).
    public var writesToPhones = 0
    /// Connections phones made to the node (to write to it, or to read the venue payload), and
    /// venue payload reads that completed.
    public var phoneSessions = 0
    public var venueReads = 0
    /// Connection Parameter Update Requests phones sent, and the responses they got.
    public var parameterRequests = 0
    public var parameterResponses = 0
}
