import Foundation

/// What systemd says of `venue-beacon.service`, for the status file the timer refreshes as root
/// (`systemctl show -p ActiveState,SubState,Result,ExecMainStatus,StatusText`): the node's own
/// status line (its `STATUS=`) while it runs, else why it does not.
public struct ServiceState: Sendable, Equatable {
    public var activeState: String
    public var subState: String
    public var result: String
    /// The main process's exit status (0 while it runs or when none ran).
    public var execMainStatus: Int?
    /// The node's `STATUS=` line: counts and states only (docs/node.md).
    public var statusText: String

    public static let unit = "venue-beacon.service"
    public static let properties = ["ActiveState", "SubState", "Result", "ExecMainStatus", "StatusText"]

    public init(activeState: String, subState: String = "", result: String = "", execMainStatus: Int? = nil, statusText: String = "") {
        self.activeState = activeState
        self.subState = subState
        self.result = result
        self.execMainStatus = execMainStatus
        self.statusText = statusText
    }

    /// `systemctl show -p …`'s output: `Key=value` lines (a value may hold `=`); nil without an
    /// `ActiveState`.
    public static func parse(_ text: String) -> ServiceState? {
        var values: [Substring: Substring] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals]] = line[line.index(after: equals)...]
        }
        guard let active = values["ActiveState"], !active.isEmpty else { return nil }
        return ServiceState(
            activeState: String(active), subState: String(values["SubState"] ?? ""), result: String(values["Result"] ?? ""),
            execMainStatus: values["ExecMainStatus"].flatMap { Int($0) }, statusText: String(values["StatusText"] ?? ""))
    }

    /// Asks systemd (blocking, up to 10 s); nil when `systemctl` is missing or does not answer.
    public static func read() -> ServiceState? {
        Doctor.output("/usr/bin/systemctl", ["show", "-p", properties.joined(separator: ","), unit]).flatMap(parse)
    }

    public var isRunning: Bool { activeState == "active" || activeState == "reloading" }

    /// The status file's `node:` line.
    public var statusLine: String {
        switch activeState {
        case "active", "reloading":
            return statusText.isEmpty ? "running (no status line yet)" : statusText
        case "activating":
            return "starting" + (statusText.isEmpty ? "" : ": " + statusText)
        case "deactivating":
            return "stopping"
        default:
            var why = [activeState]
            if result != "success", !result.isEmpty { why.append(result) }
            if let code = execMainStatus, code != 0 {
                why.append("exit status \(code)" + (code == 78 ? ": its config is not valid (sudo venue-beacon config check says why)" : ""))
            }
            return "not running (" + why.joined(separator: ", ") + ")"
        }
    }

    /// What the status LED shows, when that follows from the unit's state alone: nothing while the
    /// service does not run.
    public var led: String? { isRunning || activeState == "activating" ? nil : "off (the service is not running)" }

    /// The `node:` line when systemd did not answer.
    public static let unknown = "not known (systemctl show \(unit) did not answer)"
}
