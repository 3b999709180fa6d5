import BLETransport
/// `[bluetooth]`: which controller the node uses and how it spends its airtime.
public struct BluetoothSettings: Sendable, Equatable {
    /// `hci0` (an adapter by name), `AA:BB:CC:DD:EE:FF` (by address, so a renumbered adapter is
    /// still found) or `unix:/path` (H4 over a unix socket, e.g. BlueZ's btvirt emulator).
    public var device: String
    /// Write every HCI packet to this btsnoop file (for `btmon -r` or Wireshark); nil = no capture.
    public var btsnoop: String?
    /// Advertise the pre-2.1 128-bit Herald service next to 0xFCF6, for phones with old apps.
    public var legacyService: Bool
    /// Advertising interval, milliseconds.
    public var advertisingIntervalMS: Int
    /// The scanner listens for `scanWindowMS` out of every `scanIntervalMS`. Equal values scan
    /// continuously; the default leaves half the airtime to Wi-Fi, which shares the radio chip on
    /// the Raspberry Pi 3, 4 and Zero W.
    public var scanIntervalMS: Int
    public var scanWindowMS: Int
    /// Most Bluetooth links at once: the node's own connections to phones plus phones connected to
    /// it. One is always kept free for phones, so the node connects to at most one fewer.
    public var maxConnections: Int
    /// A phone connected to the node is disconnected after this many seconds without a valid
    /// signal write or a read of the venue payload, and its address is refused for a while, so
    /// a few hostile or stalled devices cannot hold every link.
    public var idleLinkSeconds: Int

    public static let defaultDevice = "hci0"
    public static let defaultAdvertisingIntervalMS = 200
    public static let defaultScanIntervalMS = 100
    public static let defaultScanWindowMS = 50
    public static let defaultMaxConnections = 8
    public static let defaultIdleLinkSeconds = 20

    public init(
        device: String = defaultDevice, btsnoop: String? = nil, legacyService: Bool = false,
        advertisingIntervalMS: Int = defaultAdvertisingIntervalMS, scanIntervalMS: Int = defaultScanIntervalMS,
        scanWindowMS: Int = defaultScanWindowMS, maxConnections: Int = defaultMaxConnections,
        idleLinkSeconds: Int = defaultIdleLinkSeconds
    ) {
        self.idleLinkSeconds = idleLinkSeconds
        self.device = device
        self.btsnoop = btsnoop
        self.legacyService = legacyService
        self.advertisingIntervalMS = advertisingIntervalMS
        self.scanIntervalMS = scanIntervalMS
        self.scanWindowMS = scanWindowMS
        self.maxConnections = maxConnections
    }

    /// The forms `run` opens (``HCITransportSpec``), with the socket path absolute: the service
    /// runs from `/`.
    static func validateDevice(_ text: String) -> String? {
        let allowed = "must be an adapter name such as \"hci0\", an adapter address such as \"AA:BB:CC:DD:EE:FF\", or \"unix:/path/to/socket\""
        switch try? HCITransportSpec(text) {
        case .unixSocket(let path)?: return path.hasPrefix("/") ? nil : allowed
        case .adapter?: return nil
        case nil: return allowed
        }
    }

    static func read(_ section: ConfigSection) -> BluetoothSettings {
        var s = section
        let d = BluetoothSettings()
        let device = s.string("device", default: defaultDevice, validate: validateDevice) ?? defaultDevice
        let btsnoop = s.string("btsnoop", default: nil) { $0.hasPrefix("/") ? nil : "must be an absolute path such as \"/var/lib/venue-beacon/hci.btsnoop\"" }
        let legacy = s.bool("legacy_service", default: d.legacyService)
        // HCI limits: advertising 20 ms to 10.24 s; scanning 2.5 ms to 10.24 s, in 0.625 ms units.
        let advertising = s.int("advertising_interval_ms", default: d.advertisingIntervalMS, range: 20...10_240, unit: "milliseconds")
            ?? d.advertisingIntervalMS
        let interval = s.int("scan_interval_ms", default: d.scanIntervalMS, range: 3...10_240, unit: "milliseconds") ?? d.scanIntervalMS
        var window = s.int("scan_window_ms", default: d.scanWindowMS, range: 3...10_240, unit: "milliseconds") ?? d.scanWindowMS
        if window > interval {
            s.report(
                "scan_window_ms", value: String(window),
                problem: "must be at most scan_interval_ms (\(interval)); equal values scan all the time")
            window = interval
        }
        let connections = s.int("max_connections", default: d.maxConnections, range: 2...32, unit: "links") ?? d.maxConnections
        let idle = s.int("idle_link_seconds", default: d.idleLinkSeconds, range: 2...600, unit: "seconds") ?? d.idleLinkSeconds
        s.finish()
        return BluetoothSettings(
            device: device, btsnoop: btsnoop, legacyService: legacy, advertisingIntervalMS: advertising,
            scanIntervalMS: interval, scanWindowMS: window, maxConnections: connections, idleLinkSeconds: idle)
    }

    /// The share of time the scanner listens, in percent.
    public var scanDutyPercent: Int { scanWindowMS * 100 / scanIntervalMS }

    var toml: String {
        tomlSection("bluetooth", [
            ("device", TOMLText.quote(device), ""),
            ("btsnoop", btsnoop.map(TOMLText.quote), "no capture is written"),
            ("legacy_service", String(legacyService), ""),
            ("advertising_interval_ms", String(advertisingIntervalMS), ""),
            ("scan_interval_ms", String(scanIntervalMS), ""),
            ("scan_window_ms", String(scanWindowMS), ""),
            ("max_connections", String(maxConnections), ""),
            ("idle_link_seconds", String(idleLinkSeconds), ""),
        ])
    }
}
