import BLEHost

/// What the node asks its runtime to do. Connection steps run one at a time per target; the
/// runtime reports each outcome back with ``SensorNode/link(_:target:now:into:)``.
public enum NodeAction: Hashable, Sendable {
    /// Hand the event to the layers above.
    case event(SensorEvent)
    /// Open a connection to the target (central role), giving up after
    /// ``SensorNode/attemptTimeout(of:)``. Report `.connected`, `.connectTimedOut` at that
    /// deadline, `.connectFailed`, or `.connectRefused` when the host had no link free for it.
    /// Every attempt gets exactly one of these: the node has no timer of its own for it.
    case connect(Target)
    /// Discover the Herald service (0xFCF6 or legacy), and the OpenTrace service when asked, with
    /// their characteristics. Report `.discovered`.
    case discover(Target, openTrace: Bool)
    /// Read the payload characteristic (long read). Report `.payloadRead` or `.readFailed`.
    case readPayload(Target, PayloadSource)
    /// Write to the target's signal characteristic. Report `.signalWritten`.
    case writeSignal(Target, SignalWrite)
    /// Disconnect (a session with a link; never asked while connecting). Report `.disconnected`.
    case disconnect(Target)
    /// A phone wrote application data (`0x04`): log it, do not store it.
    case immediateData(Target, [UInt8])

    /// Which characteristic holds the payload.
    public enum PayloadSource: Hashable, Sendable {
        case herald
        case openTrace
    }
}

/// What happened on a connection the node asked for.
public enum LinkEvent: Hashable, Sendable {
    case connected
    case connectFailed
    /// The attempt's deadline (``SensorNode/attemptTimeout(of:)``) passed without a link.
    case connectTimedOut
    /// The host refused the attempt before making it: every link it may open is in use (phones
    /// reading the venue hold some). Not the target's fault; the node tries again at its next
    /// tick or when one of its own links closes.
    case connectRefused
    case discovered(DiscoveredServices)
    case payloadRead([UInt8])
    case readFailed
    /// The signal write finished (either way: the session ends next).
    case signalWritten
    case disconnected
}

/// What service discovery found on a target.
public struct DiscoveredServices: Hashable, Sendable {
    /// The Herald service with its payload characteristic.
    public var heraldPayload: Bool
    /// Which signal characteristic it has: Herald counts a device as Herald only with both.
    public var signal: SignalCharacteristicKind?
    /// The OpenTrace service with its characteristic.
    public var openTrace: Bool

    public init(heraldPayload: Bool, signal: SignalCharacteristicKind?, openTrace: Bool = false) {
        self.heraldPayload = heraldPayload
        self.signal = signal
        self.openTrace = openTrace
    }

    /// What a Herald phone serves.
    public static let android = DiscoveredServices(heraldPayload: true, signal: .android)
    public static let iPhone = DiscoveredServices(heraldPayload: true, signal: .ios)
    /// No Herald service (e.g. an Apple device that is not running Herald).
    public static let none = DiscoveredServices(heraldPayload: false, signal: nil)
}

public enum SignalCharacteristicKind: Hashable, Sendable {
    /// Write only: a Herald Android phone (or a beacon); read its payload and leave.
    case android
    /// Write and notify: a Herald iPhone; it can take shared payloads.
    case ios
}

/// One advertising report, classified.
public struct AdvertSighting: Hashable, Sendable {
    public var address: BluetoothAddress
    public var addressType: AddressType
    /// Whether the advert accepts connections (ADV_IND, ADV_DIRECT_IND); nil for a scan
    /// response, which inherits what the device's advert said.
    public var connectable: Bool?
    /// dBm; nil when the controller could not measure it (HCI 127).
    public var rssi: Int?
    public var advertClass: AdvertClass
    /// The TX power level the advert announced (AD type 0x0A), dBm.
    public var txPower: Int?

    public init(address: BluetoothAddress, addressType: AddressType, connectable: Bool?, rssi: Int?, advertClass: AdvertClass, txPower: Int? = nil) {
        self.address = address
        self.addressType = addressType
        self.connectable = connectable
        self.rssi = rssi
        self.advertClass = advertClass
        self.txPower = txPower
    }

    /// One report from the controller, classified.
    public init(report: borrowing LEAdvertisingReport, classifier: borrowing AdvertClassifier) {
        let (advertClass, txPower) = classifier.classifyReport(report.data)
        self.init(
            address: report.address, addressType: report.addressType,
            connectable: report.eventType == .scanResponse ? nil : report.eventType.isConnectable,
            rssi: report.rssi.map(Int.init), advertClass: advertClass, txPower: txPower)
    }
}
