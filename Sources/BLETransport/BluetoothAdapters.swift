import BLEHost
import CBlueZ
import Glibc

/// A Bluetooth adapter the kernel knows, as listed for installers (`hci0 00:11:22:33:44:55 (up)`).
public struct BluetoothAdapterInfo: Hashable, Sendable, CustomStringConvertible {
    public var index: UInt16
    public var address: BluetoothAddress
    public var isUp: Bool

    public init(index: UInt16, address: BluetoothAddress, isUp: Bool) {
        self.index = index
        self.address = address
        self.isUp = isUp
    }

    public var name: String { "hci\(index)" }
    public var description: String { "\(name) \(address) (\(isUp ? "up" : "down"))" }
}

/// The kernel's adapters, through an unbound HCI socket (HCIGETDEVLIST + HCIGETDEVINFO; no
/// capability needed). Also the control socket for HCIDEVDOWN.
struct HCIControlSocket: ~Copyable {
    let fd: Int32

    init() throws(HCITransportError) {
        let fd = cbluez_hci_socket()
        guard fd >= 0 else { throw UserChannelStep.openSocket.error(errno: errno, adapter: "") }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    func adapters() throws(HCITransportError) -> [BluetoothAdapterInfo] {
        var ids = [UInt16](repeating: 0, count: Int(HCI_MAX_DEV))
        let count = cbluez_dev_list(fd, &ids, Int32(ids.count))
        guard count >= 0 else { throw UserChannelStep.listAdapters.error(errno: errno, adapter: "") }
        var result: [BluetoothAdapterInfo] = []
        for id in ids.prefix(Int(count)) {
            // An adapter can vanish between the two calls: skip it.
            if let info = try? info(index: id) { result.append(info) }
        }
        return result
    }

    func info(index: UInt16) throws(HCITransportError) -> BluetoothAdapterInfo {
        var info = hci_dev_info()
        info.dev_id = index
        guard cbluez_dev_info(fd, &info) >= 0 else {
            throw UserChannelStep.listAdapters.error(errno: errno, adapter: "hci\(index)")
        }
        let address = withUnsafeBytes(of: info.bdaddr) { BluetoothAddress(littleEndianBytes: $0.prefix(6)) }
        return BluetoothAdapterInfo(index: index, address: address, isUp: info.flags & (1 << UInt32(HCI_UP)) != 0)
    }

    /// HCIDEVDOWN; an adapter that is already down is fine.
    func powerDown(index: UInt16) throws(HCITransportError) {
        if cbluez_dev_down(fd, Int32(index)) < 0 && errno != EALREADY {
            throw UserChannelStep.powerDown.error(errno: errno, adapter: "hci\(index)")
        }
    }
}

extension BluetoothAdapterInfo {
    /// Every adapter the kernel knows.
    public static func all() throws(HCITransportError) -> [BluetoothAdapterInfo] {
        try HCIControlSocket().adapters()
    }
}

/// The steps of opening a user channel, for turning errno values into advice.
enum UserChannelStep {
    case openSocket, listAdapters, powerDown, bind

    func error(errno e: Int32, adapter: String) -> HCITransportError {
        switch (self, e) {
        case (_, EAFNOSUPPORT), (.openSocket, EPROTONOSUPPORT):
            return .bluetoothUnsupported
        case (.openSocket, EPERM), (.openSocket, EACCES):
            return .missingCapability(.netRaw, operation: "open an HCI socket")
        case (.powerDown, EPERM), (.powerDown, EACCES):
            return .missingCapability(.netAdmin, operation: "power \(adapter) down")
        case (.bind, EPERM), (.bind, EACCES):
            return .missingCapability(.netAdmin, operation: "bind the HCI user channel of \(adapter)")
        case (.powerDown, EBUSY), (.bind, EBUSY), (.bind, EUSERS), (.bind, EALREADY):
            return .adapterBusy(adapter: adapter, errno: e)
        case (_, ENODEV):
            return .noSuchAdapter(requested: adapter, available: (try? BluetoothAdapterInfo.all()) ?? [])
        case (.openSocket, _):
            return .system(operation: "socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)", errno: e)
        case (.listAdapters, _):
            return .system(operation: "list Bluetooth adapters", errno: e)
        case (.powerDown, _):
            return .system(operation: "power \(adapter) down (HCIDEVDOWN)", errno: e)
        case (.bind, _):
            return .system(operation: "bind the HCI user channel of \(adapter)", errno: e)
        }
    }
}
