/// A GPIO line, by name (`"GPIO17"`, portable across Pi models) or by offset on the chip.
public enum GPIOLine: Sendable, Equatable, CustomStringConvertible {
    case name(String)
    case offset(Int)

    public var description: String {
        switch self {
        case .name(let name): return TOMLText.quote(name)
        case .offset(let offset): return String(offset)
        }
    }
}

/// `[gpio]`: status LEDs and the export button.
public struct GPIOSettings: Sendable, Equatable {
    public var enabled: Bool
    /// The chip by name (`gpiochip0`), path (`/dev/gpiochip0`) or label (`pinctrl-rp1`).
    public var chip: String
    public var statusLED: GPIOLine?
    public var activityLED: GPIOLine?
    public var exportLED: GPIOLine?
    public var button: GPIOLine?
    /// LEDs wired to light when the line is low.
    public var activeLow: Bool

    public static let defaultChip = "gpiochip0"

    static func read(_ section: ConfigSection) -> GPIOSettings {
        var s = section
        let enabled = s.bool("enabled", default: false)
        let chip = s.string("chip", default: defaultChip) { $0.isEmpty ? "must name a GPIO chip such as \"gpiochip0\" or \"pinctrl-rp1\"" : nil } ?? defaultChip
        let status = s.gpioLine("status_led")
        let activity = s.gpioLine("activity_led")
        let export = s.gpioLine("export_led")
        let button = s.gpioLine("button")
        let activeLow = s.bool("active_low", default: false)
        s.finish()
        return GPIOSettings(
            enabled: enabled, chip: chip, statusLED: status, activityLED: activity, exportLED: export, button: button,
            activeLow: activeLow)
    }

    var toml: String {
        tomlSection("gpio", [
            ("enabled", String(enabled), ""),
            ("chip", TOMLText.quote(chip), ""),
            ("status_led", statusLED?.description, "no status LED"),
            ("activity_led", activityLED?.description, "no activity LED"),
            ("export_led", exportLED?.description, "no export LED"),
            ("button", button?.description, "no export button"),
            ("active_low", String(activeLow), ""),
        ])
    }
}

extension GPIOSettings {
    /// `[gpio]` of a config that may be refused for other reasons (no venue yet): nil when the
    /// text is not TOML or the section itself has a problem.
    public static func lenient(_ text: String, file: String) -> GPIOSettings? {
        guard let root = try? Settings.parseTOML(text, file: file, problems: ConfigProblems(file: file)) else { return nil }
        let problems = ConfigProblems(file: file)
        let gpio = GPIOSettings.read(ConfigSection("gpio", in: root, problems: problems))
        return problems.list.isEmpty ? gpio : nil
    }
}
