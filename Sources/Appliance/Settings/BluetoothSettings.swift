/// `[bluetooth]`: which controller the node uses.
public struct BluetoothSettings: Sendable, Equatable {
    /// `hci0` (an adapter by name), `AA:BB:CC:DD:EE:FF` (by address, so a renumbered adapter is
    /// still found) or `unix:/path` (H4 over a unix socket, e.g. BlueZ's btvirt emulator).
    public var device: String

    public static let defaultDevice = "hci0"

    static func validateDevice(_ text: String) -> String? {
        let allowed = "must be an adapter name such as \"hci0\", an adapter address such as \"AA:BB:CC:DD:EE:FF\", or \"unix:/path/to/socket\""
        if text.hasPrefix("unix:") { return text.dropFirst(5).hasPrefix("/") ? nil : allowed }
        if text.hasPrefix("hci"), let n = Int(text.dropFirst(3)), (0...15).contains(n), !text.dropFirst(3).hasPrefix("+") { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) { return nil }
        return allowed
    }

    static func read(_ section: ConfigSection) -> BluetoothSettings {
        var s = section
        let device = s.string("device", default: defaultDevice, validate: validateDevice) ?? defaultDevice
        s.finish()
        return BluetoothSettings(device: device)
    }

    var toml: String {
        tomlSection("bluetooth", [("device", TOMLText.quote(device), "")])
    }
}
