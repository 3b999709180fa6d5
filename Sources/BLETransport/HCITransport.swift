import BLEHost

/// A way to reach a controller that carries H4 packets (type byte + HCI packet) both ways.
/// Implementations: the HCI user channel on a Linux adapter, H4 over a unix stream socket.
public protocol HCITransport: Sendable {
    /// Human-readable name for logs, e.g. `hci0` or `unix:/tmp/bt-server-le`.
    var name: String { get }
}
