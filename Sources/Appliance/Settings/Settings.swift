import VenueNode
import VenueDiary
import Foundation
import TOMLKit

/// Everything the config file says, typed and validated once at start.
///
/// Loaded from one TOML file (default `/etc/venue-beacon/venue-beacon.toml`, or `--config PATH`,
/// or `$VENUE_BEACON_CONFIG`). An unknown key, a wrong type or an out-of-range value is a
/// ``ConfigError`` naming the file, the key, the bad value and what is allowed; nothing is written
/// before the settings are valid.
public struct Settings: Sendable, Equatable {
    public var venue: VenueIdentity
    public var diary: DiaryConfig
    public var export: ExportSettings
    public var bluetooth: BluetoothSettings
    public var herald: HeraldSettings
    public var gpio: GPIOSettings
    public var logging: LoggingSettings
    /// Opening hours; nil = open around the clock.
    public var schedule: Schedule?
    /// `[exposure]`: key files' verification keys and the risk score (docs/exposure.md).
    public var exposure = ExposureSettings()
    /// `[replication]`: the node's visits sent to the venue hub; nil = kept to itself.
    public var replication: ReplicationSettings?

    public static let defaultPath = "/etc/venue-beacon/venue-beacon.toml"
    public static let environmentVariable = "VENUE_BEACON_CONFIG"

    /// The sections a config file may have.
    static let sections = ["venue", "diary", "export", "bluetooth", "herald", "gpio", "logging", "schedule", "exposure", "replication"]

    /// The config path to use: an explicit `--config`, else `$VENUE_BEACON_CONFIG`, else the default.
    public static func resolvePath(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty { return fromEnvironment }
        return defaultPath
    }

    /// A config file is a few kilobytes; anything far larger is a mistake (or an attack on
    /// memory) and is refused before it is read.
    static let maximumFileBytes = 1 << 20

    /// Reads and validates a config file, and checks that the places it names for files exist.
    public static func load(path: String) throws(ConfigError) -> Settings {
        let settings = try parse(try readText(path: path, example: "config/venue-beacon.toml"), file: path)
        var problems = placeProblems(file: path, export: settings.export, storeKey: "diary.path", store: settings.diary.path, storeName: "the diary")
        problems += settings.replication?.fileProblems(file: path) ?? []
        guard problems.isEmpty else { throw ConfigError(problems) }
        return settings
    }

    /// A config file's text: a regular UTF-8 file of at most ``maximumFileBytes``. `example`
    /// names the shipped example to start from when there is no file.
    static func readText(path: String, example: String) throws(ConfigError) -> String {
        func fail(_ reason: String) -> ConfigError { ConfigError([ConfigProblem(file: path, key: nil, value: nil, problem: reason)]) }
        var info = stat()
        if stat(path, &info) == 0 {
            // Reading a FIFO would wait for a writer; a directory is no text at all.
            if let kind = Self.notRegular(info) { throw fail("it is \(kind), not a config file (a TOML text file)") }
            if info.st_size > maximumFileBytes {
                throw fail("the file is \(info.st_size) bytes; a config file is at most \(maximumFileBytes) bytes (a few KB is usual)")
            }
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason: String
            if !FileManager.default.fileExists(atPath: path) {
                reason = "no such file (write one from \(example), or pass --config PATH)"
            } else if !FileManager.default.isReadableFile(atPath: path) {
                reason = "cannot be read: permission denied"
            } else {
                reason = "cannot be read as UTF-8 text"
            }
            throw fail(reason)
        }
        return text
    }

    /// What a valid config names on this machine that cannot serve: the config itself if others
    /// can change it, sendmail when email is set, and the store (`storeKey`, the diary or the
    /// hub's store) if it cannot be created or is not a regular file.
    static func placeProblems(file path: String, export: ExportSettings, storeKey: String, store: String, storeName: String) -> [ConfigProblem] {
        var problems: [ConfigProblem] = []
        // The config decides which program runs (export.sendmail), so only its owner may change it.
        if let problem = TrustedFile.problem(path) {
            problems.append(ConfigProblem(file: path, key: nil, value: nil, problem: "refusing a config file others can change: " + problem))
        }
        if !export.email.isEmpty, let problem = TrustedFile.problem(export.sendmail, program: true) {
            problems.append(
                ConfigProblem(
                    file: path, key: "export.sendmail", value: TOMLText.quote(export.sendmail),
                    problem: problem + " (the program that hands export emails on, run as the user of venue-beacon: msmtp-mta's /usr/sbin/sendmail, say)"))
        }
        var info = stat()
        if let problem = Self.directoryProblem(forFileAt: store) {
            problems.append(ConfigProblem(file: path, key: storeKey, value: TOMLText.quote(store), problem: problem))
        } else if stat(store, &info) == 0, let kind = Self.notRegular(info) {
            // A FIFO there would hang every diary command; a device would be written over.
            problems.append(
                ConfigProblem(
                    file: path, key: storeKey, value: TOMLText.quote(store),
                    problem: "it is \(kind); \(storeName) must be a regular file (or not there yet: it is created)"))
        }
        return problems
    }

    /// What a file that is not a regular file is, for messages; nil for a regular file.
    static func notRegular(_ info: stat) -> String? {
        switch info.st_mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// The service's state directory: systemd creates it before the service starts
    /// (`StateDirectory=` in the unit), so it need not exist when the config is checked.
    static let stateDirectory = "/var/lib/venue-beacon"

    /// Why a file cannot be created at `path` because of its directory, or nil.
    static func directoryProblem(forFileAt path: String) -> String? {
        let directory = (path as NSString).deletingLastPathComponent
        if directory == stateDirectory { return nil }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            return "its directory \(directory) \(errno == ENOENT ? "does not exist" : "cannot be reached: \(String(cString: strerror(errno)))"): create it, or use the state directory \(stateDirectory)"
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "\(directory) is not a directory" }
        return nil
    }

    /// Validates config text; `file` names it in errors.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> Settings {
        let problems = ConfigProblems(file: file)
        let root = try parseTOML(text, file: file, problems: problems)
        for key in root.keys where !sections.contains(key) {
            let isTable = root[key]?.table != nil
            problems.add(
                key: isTable ? "[\(key)]" : key, value: isTable ? nil : root[key].map(ConfigSection.render),
                problem: key == "hub" && isTable
                    ? HubConfig.hubInNodeConfig
                    : "unknown \(isTable ? "section" : "key"); the file has sections " + sections.map { "[\($0)]" }.joined(separator: ", "))
        }

        let venue = VenueIdentity.read(ConfigSection("venue", in: root, problems: problems))
        let diary = DiaryConfig.read(ConfigSection("diary", in: root, problems: problems))
        let export = ExportSettings.read(ConfigSection("export", in: root, problems: problems))
        let bluetooth = BluetoothSettings.read(ConfigSection("bluetooth", in: root, problems: problems))
        let herald = HeraldSettings.read(ConfigSection("herald", in: root, problems: problems))
        let gpio = GPIOSettings.read(ConfigSection("gpio", in: root, problems: problems))
        let logging = LoggingSettings.read(ConfigSection("logging", in: root, problems: problems))
        let schedule = ScheduleSettings.read(ConfigSection("schedule", in: root, problems: problems))
        let exposure = ExposureSettings.read(ConfigSection("exposure", in: root, problems: problems))
        let replication = ReplicationSettings.read(ConfigSection("replication", in: root, problems: problems))

        guard problems.list.isEmpty, let venue else {
            throw ConfigError(problems.list)
        }
        return Settings(
            venue: venue, diary: diary, export: export, bluetooth: bluetooth, herald: herald, gpio: gpio, logging: logging,
            schedule: schedule, exposure: exposure, replication: replication)
    }

    /// Parses config text as TOML, adding the control characters the parser would let through
    /// to `problems`; a syntax error is thrown at once.
    static func parseTOML(_ text: String, file: String, problems: ConfigProblems) throws(ConfigError) -> TOMLTable {
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let at = "line \(error.source.begin.line), column \(error.source.begin.column)"
            throw ConfigError([ConfigProblem(file: file, key: nil, value: nil, problem: "\(at): not valid TOML: \(error.description)")])
        } catch {
            throw ConfigError([ConfigProblem(file: file, key: nil, value: nil, problem: "not valid TOML: \(error)")])
        }

        // The parser stops a string at an escaped NUL; catch control characters in the text.
        for found in TOMLControlCharacters.find(in: text) {
            problems.add(
                key: found.key, value: nil,
                problem: "line \(found.line): the string holds the control character \(found.escape); control characters (NUL included) are not allowed")
        }
        return root
    }

    /// The effective settings, defaults included, as a TOML file that would load to the same values.
    public var effectiveTOML: String {
        [venue.toml, diary.toml, export.toml, bluetooth.toml, herald.toml, gpio.toml, logging.toml, ScheduleSettings.toml(schedule), exposure.toml]
            .joined(separator: "\n") + (replication.map { "\n" + $0.toml } ?? "")
    }
}

/// Renders `[section]` with `key = value` lines; nil values become comments saying they are unset.
func tomlSection(_ name: String, _ entries: [(String, String?, String)]) -> String {
    var lines = ["[\(name)]"]
    for (key, value, unsetNote) in entries {
        if let value { lines.append("\(key) = \(value)") } else { lines.append("# \(key) is not set: \(unsetNote)") }
    }
    return lines.joined(separator: "\n") + "\n"
}

extension Settings {
    /// Things worth telling an operator about valid settings.
    public var notes: [String] {
        var notes: [String] = export.notes + (replication?.notes ?? [])
        if diary.recordingDays == nil {
            notes.append("diary.recording_days is \"forever\": visits are never purged")
        }
        if diary.recordingDays == 0 { notes.append("diary.recording_days = 0: nothing will be recorded") }
        if diary.shareDays == 0 { notes.append("diary.share_days = 0: exports will refuse to share anything") }
        if export.recipients.isEmpty { notes.append("export.email is empty: exports cannot be emailed") }
        if let schedule, schedule.days.allSatisfy(\.isEmpty) {
            notes.append("[schedule] says \"closed\" on all seven days: the node will never advertise or record (leave [schedule] out to run around the clock)")
        }
        return notes
    }
}
