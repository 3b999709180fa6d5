/// `[logging]`: how much the service says on stderr (journald keeps it).
public struct LoggingSettings: Sendable, Equatable {
    /// One of trace, debug, info, notice, warning, error, critical.
    public var level: String

    public static let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    static func read(_ section: ConfigSection) -> LoggingSettings {
        var s = section
        let level = s.choice("level", default: "info", allowed: levels)
        s.finish()
        return LoggingSettings(level: level)
    }

    var toml: String { tomlSection("logging", [("level", TOMLText.quote(level), "")]) }
}
