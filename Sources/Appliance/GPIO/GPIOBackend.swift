import Foundation
import Glibc

/// The only door to the GPIO hardware. Everything above it (LED patterns, debouncing, the
/// panel thread) is plain logic; everything below it is one libgpiod major version.
///
/// Two implementations, one per libgpiod API, and a build compiles exactly one of them:
/// ``GPIOBackendV1`` for libgpiod 1.x (Raspberry Pi OS / Debian bookworm, `libgpiod2` 1.6) and
/// `GPIOBackendV2` for libgpiod 2.x (trixie, `libgpiod3` 2.2: chips opened by path, line
/// requests, edge event buffers). Package.swift asks `pkg-config --modversion libgpiod` and
/// defines `GPIOD_V2` for 2.x; both include the same `<gpiod.h>` through `CGPIOD`.
/// ``GPIOBackendSystem`` names the one that was built.
public protocol GPIOBackend: Sendable {
    /// Opens a chip by name (`gpiochip0`), path (`/dev/gpiochip0`) or label (`pinctrl-rp1`,
    /// which survives the Pi 5 renumbering).
    func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip
    /// The chips that exist, for error messages.
    func availableChips() -> [GPIOChipInfo]
}

#if GPIOD_V2
/// The backend for the libgpiod this build was made against (2.x).
public typealias GPIOBackendSystem = GPIOBackendV2
#else
/// The backend for the libgpiod this build was made against (1.x).
public typealias GPIOBackendSystem = GPIOBackendV1
#endif

/// An open chip. Lines requested from it are released when it is closed. Used by one thread.
public protocol GPIOChip: AnyObject {
    var info: GPIOChipInfo { get }
    /// Claims `line` as an output, initially off. `activeLow`: the LED lights when the line is low.
    func requestOutput(_ line: GPIOLine, consumer: String, activeLow: Bool) throws(GPIOError) -> any GPIOOutput
    /// Claims `line` as a button input: pull-up bias, active low (pressed = line low), both edges.
    func requestButton(_ line: GPIOLine, consumer: String) throws(GPIOError) -> any GPIOButtonInput
    func close()
}

public protocol GPIOOutput: AnyObject {
    func set(_ on: Bool) throws(GPIOError)
}

public protocol GPIOButtonInput: AnyObject {
    func isPressed() throws(GPIOError) -> Bool
    /// Waits up to `timeout` for an edge; returns whether the button is pressed after it, or
    /// nil when the time passed without one.
    func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool?
}

public struct GPIOChipInfo: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var label: String?
    public var lines: Int
    /// The chip exists but this user may not open it.
    public var permissionDenied: Bool
    /// The group that owns the device node (usually `gpio`).
    public var group: String?

    public init(name: String, label: String?, lines: Int, permissionDenied: Bool = false, group: String? = nil) {
        self.name = name
        self.label = label
        self.lines = lines
        self.permissionDenied = permissionDenied
        self.group = group
    }

    public var description: String {
        if permissionDenied { return "\(name) (permission denied; owned by group \(group ?? "?"))" }
        return "\(name) [\(label ?? "no label")] (\(lines) lines)"
    }
}

public enum GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    case chipNotFound(String, available: [GPIOChipInfo])
    case permissionDenied(device: String, group: String?)
    case lineNotFound(GPIOLine, chip: GPIOChipInfo)
    case lineBusy(GPIOLine, chip: String, consumer: String?)
    case failed(String, code: Int32)

    public var description: String {
        switch self {
        case .chipNotFound(let spec, let available):
            if available.isEmpty {
                return "GPIO chip \"\(spec)\" not found: this machine has no GPIO chips (/dev/gpiochip*); "
                    + "set gpio.enabled = false to run without LEDs and button"
            }
            return "GPIO chip \"\(spec)\" not found; the chips here are: "
                + available.map(\.description).joined(separator: ", ") + " (set gpio.chip to a name, path or label)"
        case .permissionDenied(let device, let group):
            let group = group ?? "gpio"
            return "permission denied opening \(device): the user running venue-beacon must be in group \(group) "
                + "(the service unit has SupplementaryGroups=\(group); for a login user: adduser USER \(group))"
        case .lineNotFound(let line, let chip):
            return "GPIO line \(line) not found on \(chip) (use a line name such as \"GPIO17\" or an offset below \(chip.lines))"
        case .lineBusy(let line, let chip, let consumer):
            return "GPIO line \(line) on \(chip) is already in use" + (consumer.map { " by \"\($0)\"" } ?? "")
                + " (another program or a device-tree overlay holds it)"
        case .failed(let what, let code):
            return "\(what): \(String(cString: strerror(code)))"
        }
    }
}

/// The group that owns a device node, for permission messages.
func deviceGroup(_ path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0, let group = getgrgid(info.st_gid), let name = group.pointee.gr_name else { return nil }
    return String(cString: name)
}
