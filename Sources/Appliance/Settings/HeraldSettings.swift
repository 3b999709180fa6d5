import BLEHost
import Herald

/// `[herald]`: how the node follows phones: connections, payload reads and sharing, which
/// advert-only protocols it records, and Herald-format logs. Defaults are Herald's.
public struct HeraldSettings: Sendable, Equatable {
    /// Give up a connection attempt after this many seconds (Herald `connectionAttemptTimeout`).
    public var connectionTimeoutSeconds: Int
    /// Read a phone's payload again after this many seconds; nil never does (Herald's default:
    /// a Herald payload does not change while its phone is present).
    public var payloadUpdateSeconds: Int?
    /// Forget a phone unseen for this many seconds (Herald `peripheralCleanInterval`).
    public var peripheralCleanSeconds: Int
    /// Write the payloads of other iPhones to iPhones, as Herald on Android does, so locked
    /// iPhones at the venue find each other.
    public var payloadSharing: Bool
    /// Record Exposure Notification adverts (service data 0xFD6F) as kind `gaen`.
    public var gaen: Bool
    /// Connect to OpenTrace phones (service a6ba4286-…) and record their payloads as `opentrace`.
    public var openTrace: Bool
    /// A further advert-based protocol: the service data under this UUID is a phone's payload,
    /// recorded as kind `advert` (Herald's interop advert protocol; nil = off).
    public var advertProtocolService: BluetoothUUID?
    /// Write Herald's own log files (`contacts.csv`, `detection.csv`, `statistics.csv`) here, for
    /// herald-analysis; nil = none.
    public var logDirectory: String?
    /// The most the log directory holds, in MB (10^6 bytes): past it, whole day folders are
    /// deleted oldest first, and a day that passes it alone writes no more rows until the next.
    public var logBudgetMB: Int

    /// `log_budget_mb`'s default: fits a 16 GB card beside the system and 31 days of a busy
    /// venue's diary (docs/herald.md, "Size budget").
    public static let defaultLogBudgetMB = 4000
    /// What `log_budget_mb` takes.
    public static let logBudgetRange = 10...1_000_000

    public init(
        connectionTimeoutSeconds: Int = 12, payloadUpdateSeconds: Int? = nil, peripheralCleanSeconds: Int = 1800,
        payloadSharing: Bool = true, gaen: Bool = true, openTrace: Bool = false, advertProtocolService: BluetoothUUID? = nil,
        logDirectory: String? = nil, logBudgetMB: Int = defaultLogBudgetMB
    ) {
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.payloadUpdateSeconds = payloadUpdateSeconds
        self.peripheralCleanSeconds = peripheralCleanSeconds
        self.payloadSharing = payloadSharing
        self.gaen = gaen
        self.openTrace = openTrace
        self.advertProtocolService = advertProtocolService
        self.logDirectory = logDirectory
        self.logBudgetMB = logBudgetMB
    }

    /// The budget in bytes, as ``HeraldLogWriter`` takes it.
    public var logBudgetBytes: Int { logBudgetMB * 1_000_000 }

    static func read(_ section: ConfigSection) -> HeraldSettings {
        var s = section
        let d = HeraldSettings()
        let timeout = s.int("connection_timeout_seconds", default: d.connectionTimeoutSeconds, range: 1...60, unit: "seconds")
            ?? d.connectionTimeoutSeconds
        let update: Int?
        switch s.intOrWord("payload_update_seconds", range: 10...604_800, words: ["never"], unit: "seconds") {
        case .number(let seconds): update = seconds
        case .absent, .word, .invalid: update = nil
        }
        let clean = s.int("peripheral_clean_seconds", default: d.peripheralCleanSeconds, range: 10...86_400, unit: "seconds")
            ?? d.peripheralCleanSeconds
        let sharing = s.bool("payload_sharing", default: d.payloadSharing)
        let gaen = s.bool("gaen", default: d.gaen)
        let openTrace = s.bool("opentrace", default: d.openTrace)
        var advertProtocol: BluetoothUUID?
        _ = s.string("advert_protocol_service", default: nil) { text in
            guard text.count == 4 || text.count == 36, let uuid = BluetoothUUID(text) else {
                return "must be a 16-bit UUID such as \"FD6F\" or a 128-bit UUID such as \"a6ba4286-c550-4794-a888-9467ef0b31a8\""
            }
            if uuid == InteropUUIDs.exposureNotification, gaen {
                return "is the Exposure Notification service, which gaen = true already records as kind gaen; set gaen = false to record it as kind advert"
            }
            advertProtocol = uuid
            return nil
        }
        let logDirectory = s.string("log_directory", default: nil) { $0.hasPrefix("/") ? nil : "must be an absolute path such as \"/var/lib/venue-beacon/herald\"" }
        let logBudget = s.int("log_budget_mb", default: d.logBudgetMB, range: Self.logBudgetRange, unit: "MB") ?? d.logBudgetMB
        s.finish()
        return HeraldSettings(
            connectionTimeoutSeconds: timeout, payloadUpdateSeconds: update, peripheralCleanSeconds: clean,
            payloadSharing: sharing, gaen: gaen, openTrace: openTrace, advertProtocolService: advertProtocol,
            logDirectory: logDirectory, logBudgetMB: logBudget)
    }

    var toml: String {
        tomlSection("herald", [
            ("connection_timeout_seconds", String(connectionTimeoutSeconds), ""),
            ("payload_update_seconds", payloadUpdateSeconds.map(String.init) ?? "\"never\"", ""),
            ("peripheral_clean_seconds", String(peripheralCleanSeconds), ""),
            ("payload_sharing", String(payloadSharing), ""),
            ("gaen", String(gaen), ""),
            ("opentrace", String(openTrace), ""),
            ("advert_protocol_service", advertProtocolService.map { TOMLText.quote($0.description) }, "no further advert-based protocol is recorded"),
            ("log_directory", logDirectory.map(TOMLText.quote), "no Herald-format logs are written"),
            ("log_budget_mb", String(logBudgetMB), ""),
        ])
    }
}
