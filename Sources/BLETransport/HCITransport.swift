import BLEHost

/// A way to reach a controller that carries H4 packets (type byte + HCI packet) both ways.
/// Implementations: the HCI user channel on a Linux adapter (``UserChannelTransport``), H4 over a
/// unix stream socket (``UnixH4Transport``), and ``CapturingTransport`` around either.
///
/// Threading: one owner (the host runtime's dedicated thread) calls ``send(_:)``, ``receive(timeout:)``
/// and ``close()``; these block that thread, never the Swift cooperative pool. Any thread may call
/// ``wakeUp()`` to make a waiting ``receive(timeout:)`` return early (e.g. when the owner has new work).
public protocol HCITransport: Sendable {
    /// Human-readable name for logs, e.g. `hci0` or `unix:/tmp/bt-server-le`.
    var name: String { get }

    /// Sends one packet to the controller.
    func send(_ packet: H4Packet) throws(HCITransportError)

    /// Waits until packets arrive, `timeout` passes (nil: no limit) or ``wakeUp()`` is called, and
    /// returns the packets read, in order (possibly none). Throws when the transport can no longer
    /// be used (peer gone, adapter removed, framing lost): close it and open a new one.
    func receive(timeout: Duration?) throws(HCITransportError) -> [H4Packet]

    /// Makes a pending or the next ``receive(timeout:)`` return early. Safe from any thread.
    func wakeUp()

    /// Releases the controller. Idempotent; later calls to send/receive throw ``HCITransportError/closed``.
    func close()
}
