import Glibc
import BLEHost

/// Why a transport could not be opened or stopped working. The descriptions are written for the
/// person installing the appliance: each says what is wrong and what to do about it.
public enum HCITransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kernel has no Bluetooth support (socket(AF_BLUETOOTH) fails with EAFNOSUPPORT).
    case bluetoothUnsupported
    /// The process lacks a capability the operation needs.
    case missingCapability(LinuxCapability, operation: String)
    /// The adapter is powered or held by someone else (EBUSY after retries, EUSERS).
    case adapterBusy(adapter: String, errno: Int32)
    /// No adapter matches the request; `available` lists the ones that exist.
    case noSuchAdapter(requested: String, available: [BluetoothAdapterInfo])
    /// Nothing listens at a unix socket path (ENOENT, ECONNREFUSED).
    case noServer(path: String, errno: Int32)
    /// The controller side closed the connection (EOF on a stream).
    case closedByPeer(String)
    /// The adapter disappeared (ENODEV/ENETDOWN on a user channel: unplugged or reset by the kernel).
    case adapterGone(String)
    /// The byte stream lost H4 framing; it cannot be trusted any more.
    case framingLost(H4FramingError)
    /// The transport was closed by its owner.
    case closed
    /// A capture file could not be written.
    case captureFailed(path: String, errno: Int32)
    /// Any other failed system call.
    case system(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .bluetoothUnsupported:
            return "this kernel has no Bluetooth support (socket(AF_BLUETOOTH) failed with EAFNOSUPPORT); "
                + "use a kernel with CONFIG_BT (Raspberry Pi OS has it; check that the bluetooth module is not "
                + "blacklisted), or use an H4 socket such as unix:/tmp/bt-server-le for testing"
        case .missingCapability(let capability, let operation):
            return "permission denied to \(operation): the process needs \(capability.name). "
                + "Run as root, or grant it: `sudo setcap cap_net_admin,cap_net_raw+eip /path/to/venue-beacon`, "
                + "or in the systemd unit: `AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW`"
        case .adapterBusy(let adapter, let errno):
            let why =
                errno == EUSERS
                ? "another program has \(adapter) open through the HCI user channel (stop it)"
                : "\(adapter) is busy: something keeps powering it up, usually bluetooth.service (BlueZ) — "
                    + "stop it with `sudo systemctl stop bluetooth` and keep it off with "
                    + "`sudo systemctl mask bluetooth` — or another program holds it through the HCI user "
                    + "channel (is a venue-beacon service already running?)"
            return "cannot take over \(adapter): \(why) [\(errnoName(errno))]"
        case .noSuchAdapter(let requested, let available):
            let list =
                available.isEmpty
                ? "no Bluetooth adapters exist (is the controller's firmware loaded? see `dmesg | grep -i blue`)"
                : "adapters present: " + available.map(\.description).joined(separator: ", ")
            return "no Bluetooth adapter \(requested); \(list)"
        case .noServer(let path, let errno):
            return "nothing serves H4 at \(path) [\(errnoName(errno))]; for the emulator run `btvirt -s`, "
                + "which serves /tmp/bt-server-le"
        case .closedByPeer(let name):
            return "\(name): the controller side closed the connection"
        case .adapterGone(let name):
            return "\(name): the adapter went away (unplugged, or reset by the kernel)"
        case .framingLost(let error):
            return "H4 stream unusable: \(error)"
        case .closed:
            return "the transport is closed"
        case .captureFailed(let path, let errno):
            return "cannot write the btsnoop capture \(path) [\(errnoName(errno))]"
        case .system(let operation, let errno):
            return "\(operation) failed [\(errnoName(errno))]"
        }
    }
}

/// The Linux capabilities an HCI user channel needs.
public enum LinuxCapability: Sendable, Hashable {
    /// Needed to power the adapter down (HCIDEVDOWN) and to bind the user channel.
    case netAdmin
    /// Needed to open raw HCI sockets.
    case netRaw

    public var name: String {
        switch self {
        case .netAdmin: return "CAP_NET_ADMIN"
        case .netRaw: return "CAP_NET_RAW"
        }
    }
}
