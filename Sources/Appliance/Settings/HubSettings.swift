import Foundation
import TOMLKit
import VenueDiary

/// `[hub]`: the venue hub, which collects the nodes' visits from the broker into one store.
public struct HubSettings: Sendable, Equatable {
    /// The hub's SQLite file: every node's visits.
    public var store: String
    /// The venue's broker.
    public var broker: BrokerAddress
    /// The hub's broker login (the shipped ACL gives `hub` the nodes' visits).
    public var username: String
    /// A file whose first line is the broker password; nil: log in without a password.
    public var passwordFile: String?
    /// The PEM file of the CA that signed the broker's certificate (mqtts only).
    public var caFile: String?

    public static let defaultStore = "/var/lib/venue-beacon/hub.sqlite"
    public static let defaultUsername = "hub"

    public init(
        store: String = HubSettings.defaultStore, broker: BrokerAddress, username: String = HubSettings.defaultUsername,
        passwordFile: String? = nil, caFile: String? = nil
    ) {
        self.store = store
        self.broker = broker
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
    }

    static func read(_ section: ConfigSection) -> HubSettings? {
        var s = section
        let store = s.string("store", default: defaultStore) {
            $0.hasPrefix("/") && !$0.hasSuffix("/") ? nil : "must be the absolute path of the hub's SQLite file, such as \"\(defaultStore)\""
        } ?? defaultStore
        let broker = BrokerLogin.broker(&s)
        let login = BrokerLogin.read(&s, broker: broker, defaultUsername: defaultUsername)
        s.finish()
        guard let broker, let username = login.username else { return nil }
        return HubSettings(store: store, broker: broker, username: username, passwordFile: login.passwordFile, caFile: login.caFile)
    }

    /// The broker password: the first line of `password_file`; nil without one. Never log it.
    public func password() throws -> String? { try BrokerLogin.password(passwordFile) }

    var toml: String {
        tomlSection("hub", [
            ("store", TOMLText.quote(store), ""),
            ("broker", TOMLText.quote(broker.description), ""),
            ("username", TOMLText.quote(username), ""),
        ] + BrokerLogin.tomlEntries(passwordFile: passwordFile, caFile: caFile))
    }
}

/// A venue hub's config file (`venue-beacon hub --config PATH`; example: config/venue-hub.toml):
/// the same format as a node's, with `[venue]`, `[diary]` (the visit limits; no `path`),
/// `[export]`, optionally `[logging]`, and `[hub]`. Loaded with the same checks as a node's.
public struct HubConfig: Sendable, Equatable {
    public var venue: VenueIdentity
    /// The limits (`check_out_seconds`, `recording_days`, `share_days`, …). Its `path` is unused
    /// and empty: the hub keeps its visits in ``HubSettings/store``.
    public var diary: DiaryConfig
    public var export: ExportSettings
    public var logging: LoggingSettings
    public var hub: HubSettings

    /// The sections a hub's config may have.
    static let sections = ["venue", "diary", "export", "logging", "hub"]

    /// Said of `[hub]` in a node's config.
    static let hubInNodeConfig = "is a hub's section, not a node's: a file with [hub] is the venue hub's config "
        + "(run the hub with `venue-beacon hub --config PATH`; example: config/venue-hub.toml), "
        + "and a node sends its visits to the hub with [replication]"

    /// Reads and validates a hub's config file with a node's checks: size, regular file, only
    /// its owner may change it, sendmail when email is set, the store's directory, and the
    /// broker's password and CA files.
    public static func load(path: String) throws(ConfigError) -> HubConfig {
        let config = try parse(try Settings.readText(path: path, example: "config/venue-hub.toml"), file: path)
        var problems = Settings.placeProblems(file: path, export: config.export, storeKey: "hub.store", store: config.hub.store, storeName: "the hub's store")
        problems += BrokerLogin.fileProblems(section: "hub", passwordFile: config.hub.passwordFile, caFile: config.hub.caFile, file: path)
        guard problems.isEmpty else { throw ConfigError(problems) }
        return config
    }

    /// Validates a hub's config text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> HubConfig {
        let problems = ConfigProblems(file: file)
        let root = try Settings.parseTOML(text, file: file, problems: problems)
        let nodeSections = Settings.sections.filter { !sections.contains($0) }
        for key in root.keys where !sections.contains(key) {
            let isTable = root[key]?.table != nil
            let problem: String
            if isTable && nodeSections.contains(key) {
                problem = "is a node's section: " + nodeSections.map { "[\($0)]" }.joined(separator: ", ")
                    + " belong in a node's config (\(Settings.defaultPath)), not the hub's; the hub's has " + sectionList
            } else {
                problem = "unknown \(isTable ? "section" : "key"); a hub's config has sections " + sectionList
            }
            problems.add(key: isTable ? "[\(key)]" : key, value: isTable ? nil : root[key].map(ConfigSection.render), problem: problem)
        }

        let venue = VenueIdentity.read(ConfigSection("venue", in: root, problems: problems))
        if let path = root["diary"]?.table?["path"] {
            problems.add(
                key: "diary.path", value: ConfigSection.render(path),
                problem: "the hub keeps its visits in [hub] store, not in a diary: leave diary.path out (write store = … under [hub])")
        }
        // The diary's own check of `path` would say the same key twice.
        let diaryProblems = ConfigProblems(file: file)
        var diary = DiaryConfig.read(ConfigSection("diary", in: root, problems: diaryProblems))
        for problem in diaryProblems.list where problem.key != "diary.path" {
            problems.add(key: problem.key, value: problem.value, problem: problem.problem)
        }
        diary.path = ""
        let export = ExportSettings.read(ConfigSection("export", in: root, problems: problems))
        let logging = LoggingSettings.read(ConfigSection("logging", in: root, problems: problems))
        let hubSection = ConfigSection("hub", in: root, problems: problems)
        var hub: HubSettings?
        if hubSection.isPresent {
            hub = HubSettings.read(hubSection)
        } else if root["hub"] == nil {
            problems.add(key: "[hub]", value: nil, problem: "is required in a hub's config (at least broker = \"mqtt://HOST\")")
        }

        guard problems.list.isEmpty, let venue, let hub else {
            throw ConfigError(problems.list)
        }
        return HubConfig(venue: venue, diary: diary, export: export, logging: logging, hub: hub)
    }

    static var sectionList: String { sections.map { "[\($0)]" }.joined(separator: ", ") }

    /// Whether the file at `path` is a hub's config: TOML with a `[hub]` table. False for
    /// anything else, unreadable or invalid files included (a node's loader then says why).
    public static func isHubConfig(path: String) -> Bool {
        guard let text = try? Settings.readText(path: path, example: ""), let root = try? TOMLTable(string: text) else { return false }
        return root["hub"]?.table != nil
    }

    /// The effective settings, defaults included, as a hub config that would load to the same values.
    public var effectiveTOML: String {
        let diaryLines = diary.toml.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("path = ") }
        let diaryTOML = diaryLines.joined(separator: "\n").replacingOccurrences(
            of: "[diary]\n", with: "[diary]\n# no path: the hub keeps its visits in [hub] store\n")
        return [venue.toml, diaryTOML, export.toml, logging.toml, hub.toml].joined(separator: "\n")
    }
}

extension HubConfig {
    /// A visit still open at the hub but unseen this long is abandoned (its node died, or a
    /// replay there was interrupted): exports show it closed at its last sighting. As a node's
    /// ``VenueDiary/DiarySettings/abandonedAfter``, from this config's check-out limit.
    public var abandonedAfter: Double {
        DiarySettings(checkOutSeconds: Double(diary.checkOutSeconds)).abandonedAfter
    }
}
