import BLEHost
import BLETransport
import Foundation

/// One rfkill switch as `/sys/class/rfkill/rfkillN/` gives it (`type`, `soft`, `hard`, `name`).
public struct RfkillSwitch: Sendable, Equatable {
    public var id: String
    public var name: String
    public var type: String
    public var soft: Bool
    public var hard: Bool

    public init(id: String, name: String, type: String, soft: Bool, hard: Bool) {
        self.id = id
        self.name = name
        self.type = type
        self.soft = soft
        self.hard = hard
    }

    /// From the sysfs files' text ("bluetooth\n", "1\n"); nil when a file is missing or not 0/1.
    public static func parse(id: String, name: String?, type: String?, soft: String?, hard: String?) -> RfkillSwitch? {
        func flag(_ text: String?) -> Bool? {
            switch text?.trimmingCharacters(in: .whitespacesAndNewlines) {
            case "0": false
            case "1": true
            default: nil
            }
        }
        guard let type = type?.trimmingCharacters(in: .whitespacesAndNewlines), !type.isEmpty,
            let soft = flag(soft), let hard = flag(hard)
        else { return nil }
        return RfkillSwitch(
            id: id, name: name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? id, type: type, soft: soft, hard: hard)
    }
}

/// The Bluetooth half of the checklist: rfkill, the controller, bluetoothd, LE.
enum BluetoothChecks {
    static let softBlockFix =
        "sudo rfkill unblock bluetooth, and set the Wi-Fi country (Raspberry Pi Imager's settings, or "
        + "sudo raspi-config nonint do_wifi_country GB): until a country is set Raspberry Pi OS blocks the radios "
        + "again at every boot"
    static let hardBlockFix =
        "a switch or the firmware blocks the radio: remove dtoverlay=disable-bt (or pi3-disable-bt) from config.txt "
        + "on the boot partition, then restart"

    /// rfkill: a Bluetooth switch blocked is the Pi's most common trap.
    static func rfkill(_ switches: [RfkillSwitch]) -> DoctorLine {
        let bluetooth = switches.filter { $0.type == "bluetooth" }
        guard !bluetooth.isEmpty else {
            return .unchecked("rfkill", "no Bluetooth rfkill switch: no adapter has registered one (see controller)")
        }
        func names(_ list: [RfkillSwitch]) -> String { list.map { "\($0.name) (\($0.id))" }.joined(separator: ", ") }
        let hard = bluetooth.filter(\.hard)
        if !hard.isEmpty { return .problem("rfkill", "Bluetooth hard-blocked: \(names(hard))", fix: hardBlockFix) }
        let soft = bluetooth.filter(\.soft)
        if !soft.isEmpty { return .problem("rfkill", "Bluetooth soft-blocked: \(names(soft))", fix: softBlockFix) }
        return .ok("rfkill", "Bluetooth not blocked (\(names(bluetooth)))")
    }

    static let missingFix =
        "no such adapter: check that config.txt on the boot partition has no dtoverlay=disable-bt and that "
        + "hciuart.service ran (systemctl status hciuart); a USB adapter: plug it in. Set [bluetooth] device "
        + "to the adapter's address to survive renumbering"

    /// The controller `[bluetooth] device` names, among the adapters the kernel lists.
    static func controller(device: String, adapters: Result<[BluetoothAdapterInfo], HCITransportError>, socketExists: (String) -> Bool)
        -> DoctorLine
    {
        let spec: HCITransportSpec
        do {
            spec = try HCITransportSpec(device)
        } catch {
            return .problem("controller", "bluetooth.device = \(device): \(error)", fix: "set [bluetooth] device to hci0 or the adapter's address")
        }
        let wanted: UserChannelTransport.Adapter
        switch spec {
        case .unixSocket(let path):
            return socketExists(path)
                ? .ok("controller", "\(spec): the socket is there (an emulator, not a radio)")
                : .problem("controller", "\(spec): no socket at \(path)", fix: "start the emulator (btvirt -s), or set [bluetooth] device = \"hci0\"")
        case .adapter(let adapter): wanted = adapter
        }
        let list: [BluetoothAdapterInfo]
        switch adapters {
        case .success(let found): list = found
        case .failure(let error): return .problem("controller", "cannot list Bluetooth adapters: \(error)", fix: missingFix)
        }
        let match = list.first { info in
            switch wanted {
            case .index(let index): info.index == index
            case .address(let address): info.address == address
            }
        }
        guard let match else {
            let others = list.isEmpty ? "no adapter at all" : "adapters present: " + list.map(\.description).joined(separator: ", ")
            return .problem("controller", "\(wanted) not found (\(others))", fix: missingFix)
        }
        let power = match.isUp
            ? "powered (bluetoothd has it; the service powers it down to open it)"
            : "down (held by the service's user channel while it runs, or not powered)"
        return .ok("controller", "\(match.name) \(match.address), \(power)")
    }

    /// bluetoothd beside the service: allowed (docs/appliance.md, "the service and bluetoothd").
    static func bluetoothd(running: Bool?) -> DoctorLine {
        switch running {
        case nil: return .unchecked("bluetoothd", "cannot see other processes from here (the service's sandbox)")
        case true?:
            return .ok("bluetoothd", "running: the service takes its adapter from it while it runs; bluetoothd keeps any other")
        case false?: return .ok("bluetoothd", "not running: the adapter is the service's alone")
        }
    }

    /// Whether the process list (`/proc/<pid>/comm` texts) has bluetoothd.
    static func bluetoothdRunning(comms: [String]) -> Bool {
        comms.contains { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetoothd" }
    }

    /// LE and advertising while scanning need the controller itself (HCI commands over the
    /// user channel, which takes the adapter from the service or bluetoothd): not done here.
    static let leUnchecked = DoctorLine.unchecked(
        "LE states", "not asked: that needs the controller itself, which the service holds",
        fix: "with the service stopped, venue-beacon bt info prints the controller's LE features and states")
}

extension BluetoothChecks {
    /// Whether rfkill blocks Bluetooth or the adapter `device` names is missing: the status
    /// LED's "Bluetooth blocked or missing". An emulator's socket (`unix:`) is neither.
    static func blockedOrMissing(device: String) -> Bool {
        guard let spec = try? HCITransportSpec(device), case .adapter = spec else { return false }
        if rfkill(Doctor.rfkillSwitches()).verdict == .problem { return true }
        let adapters = Result(catching: { () throws(HCITransportError) -> [BluetoothAdapterInfo] in try BluetoothAdapterInfo.all() })
        return controller(device: device, adapters: adapters, socketExists: { _ in false }).verdict == .problem
    }
}
