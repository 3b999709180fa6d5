import Dispatch
import Glibc
import Synchronization

/// `SIGUSR1` as a button: `kill -USR1 $(pidof venue-beacon)` (or `systemctl kill -s USR1
/// venue-beacon`) exports and delivers exactly as a press does. For operators without a
/// button, and for tests.
public final class SignalTrigger: Sendable {
    /// One element per signal received (several before the reader looks count once).
    public let presses: AsyncStream<Void>
    private let source: Mutex<(any DispatchSourceSignal)?>

    public init(signal number: Int32 = SIGUSR1) {
        // The default action of SIGUSR1 is to terminate: ignore it, and read it from a source.
        signal(number, SIG_IGN)
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        presses = stream
        let signalSource = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "venue-beacon.signal"))
        signalSource.setEventHandler { continuation.yield() }
        signalSource.setCancelHandler { continuation.finish() }
        signalSource.resume()
        source = Mutex(signalSource)
    }

    /// Stops listening and ends ``presses``.
    public func cancel() { source.withLock { $0?.cancel() } }
}
