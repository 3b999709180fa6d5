import Foundation
import Glibc

/// The machine's half of the checklist: GPIO access and the clock.
enum SystemChecks {
    /// A GPIO chip's device file as `stat` gives it, with its group's name.
    struct ChipDevice: Sendable, Equatable {
        var path: String
        var mode: mode_t
        var uid: uid_t
        var group: String
    }

    /// The groups the service runs with: its own and the unit's `SupplementaryGroups=gpio`.
    static let serviceGroups = [ConfigImport.serviceGroup, "gpio"]
    static let udevFix =
        "the package's udev rule gives /dev/gpiochip* to group gpio: sudo udevadm trigger --subsystem-match=gpio --action=change"

    /// Whether the service's user can open the chip, and the lines it would light.
    static func gpio(settings: GPIOSettings, gpioGroupExists: Bool, chip: ChipDevice?) -> DoctorLine {
        guard settings.enabled else { return .unchecked("GPIO", "[gpio] enabled = false: no LEDs and no button") }
        guard gpioGroupExists else {
            return .problem(
                "GPIO", "the group gpio does not exist: the unit's SupplementaryGroups=gpio keeps the service from starting",
                fix: "sudo addgroup --system gpio, then " + udevFix)
        }
        guard let chip else {
            return .problem(
                "GPIO", "chip \(settings.chip) not found",
                fix: "set [gpio] chip to one that exists (ls /dev/gpiochip*; pinctrl-rp1 on a Pi 5), or gpio.enabled = false")
        }
        let mode = String(chip.mode & 0o777, radix: 8)
        let readWrite: mode_t = 0o6
        let byOthers = chip.mode & readWrite == readWrite
        let byGroup = chip.mode >> 3 & readWrite == readWrite && serviceGroups.contains(chip.group)
        let lines = [("status_led", settings.statusLED), ("activity_led", settings.activityLED), ("export_led", settings.exportLED), ("button", settings.button)]
            .compactMap { key, line in line.map { "\(key) \($0)" } }
        let linesText = lines.isEmpty ? "no lines configured" : "lines " + lines.joined(separator: ", ") + " (not requested here: the service holds them)"
        guard byOthers || byGroup else {
            return .problem(
                "GPIO", "\(chip.path) is group \(chip.group), mode 0\(mode): the service (groups \(serviceGroups.joined(separator: ", "))) cannot open it",
                fix: udevFix)
        }
        return .ok("GPIO", "\(chip.path) group \(chip.group), mode 0\(mode): the service can open it; \(linesText)")
    }

    /// The device file for `[gpio] chip`: a path, a name under /dev, or a label as
    /// `/sys/bus/gpio/devices/gpiochipN/label` gives it.
    static func chipPath(_ chip: String, labels: [String: String]) -> String {
        if chip.hasPrefix("/") { return chip }
        if chip.hasPrefix("gpiochip"), chip.dropFirst("gpiochip".count).allSatisfy(\.isNumber) { return "/dev/" + chip }
        if let name = labels.first(where: { $0.value == chip })?.key { return "/dev/" + name }
        return "/dev/" + chip
    }

    /// `KEY=VALUE` lines, as `timedatectl show` and `show-timesync` print them.
    static func properties(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let equals = line.firstIndex(of: "=") else { continue }
            result[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return result
    }

    static let networkFix =
        "the clock needs the network: Wi-Fi (network, password and country in Raspberry Pi Imager's settings) or a "
        + "cable, and NTP (UDP port 123) allowed out; timedatectl timesync-status shows the server it tries"

    /// The clock: synchronised or not, since when, from where.
    /// - Parameters:
    ///   - show: `timedatectl show` (nil: timedatectl could not run).
    ///   - timesync: `timedatectl show-timesync` (nil: none, e.g. chrony instead of timesyncd).
    ///   - flagSince: when systemd-timesyncd created `/run/systemd/timesync/synchronized`, if it did.
    static func clock(show: String?, timesync: String?, flagSince: Date?) -> DoctorLine {
        let props = show.map(properties) ?? [:]
        let sync = timesync.map(properties) ?? [:]
        let synchronised = props["NTPSynchronized"] == "yes" || flagSince != nil
        var source = ""
        if let server = sync["ServerName"], !server.isEmpty {
            let address = sync["ServerAddress"].flatMap { $0.isEmpty ? nil : $0 }
            source = ", source \(server)" + (address.map { " (\($0))" } ?? "")
        }
        if synchronised {
            let since = flagSince.map { " since \(UTCDate.readable($0))" } ?? ""
            return .ok("clock", "synchronised\(since)\(source)")
        }
        let stamped = "not synchronised: visits are marked and corrected when it is"
        if show == nil && flagSince == nil {
            return .problem("clock", stamped + " (timedatectl could not run, and timesyncd has not synchronised)", fix: networkFix)
        }
        if props["NTP"] == "no" {
            return .problem("clock", stamped + "; network time is switched off (NTP=no)", fix: "sudo timedatectl set-ntp true")
        }
        return .problem("clock", stamped + (source.isEmpty ? "" : "; trying" + source.dropFirst(1)), fix: networkFix)
    }
}
