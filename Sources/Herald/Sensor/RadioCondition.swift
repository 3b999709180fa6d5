/// The node's Bluetooth condition: the one summary of the host's ``BluetoothState`` (its session
/// with the controller) and ``RadioState`` (whether it advertises and scans) that the layers
/// above see: the sensor node (``SensorNode/bluetoothState(_:now:into:)``, which drops its
/// sessions when the radio stops running), Herald's events, logs and the status LED.
public enum RadioCondition: Hashable, Sendable, CustomStringConvertible {
    /// Opening or initialising the controller.
    case starting
    /// Advertising and scanning.
    case running
    /// The controller works but is not both advertising and scanning (e.g. advertising pauses
    /// for a moment when a phone connects, or while its parameters change at the connection cap).
    case partial(advertising: Bool, scanning: Bool)
    /// No controller (missing, failed, being reopened); the reason, for logs.
    case unavailable(String)

    public var description: String {
        switch self {
        case .starting: return "starting"
        case .running: return "advertising and scanning"
        case .partial(let advertising, let scanning):
            return "\(advertising ? "advertising" : "not advertising"), \(scanning ? "scanning" : "not scanning")"
        case .unavailable(let reason): return "Bluetooth unavailable: \(reason)"
        }
    }
}
