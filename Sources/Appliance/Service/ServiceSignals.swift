@preconcurrency import Dispatch
import Glibc

/// What a signal asks of the service.
public enum ServiceSignal: Sendable, Equatable {
    /// SIGTERM (systemd stop) or SIGINT (Ctrl-C): close the diary and exit.
    case terminate(Int32)
    /// SIGHUP: conventionally "reload the config", which the service does not do.
    case reload
    /// SIGUSR1: export and deliver the diary, as the button does.
    case export
}

/// The process's signals as an async sequence. The signals' default actions are turned off
/// while the stream exists, so a SIGTERM never kills the process before the diary is closed.
enum ServiceSignals {
    static let handled: [(Int32, ServiceSignal)] = [
        (SIGTERM, .terminate(SIGTERM)), (SIGINT, .terminate(SIGINT)), (SIGHUP, .reload), (SIGUSR1, .export),
    ]

    static func stream() -> AsyncStream<ServiceSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServiceSignal.self)
        let queue = DispatchQueue(label: "venue-beacon.signals")
        let sources = SignalSources(handled.map { number, meaning in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { continuation.yield(meaning) }
            source.resume()
            return source
        })
        continuation.onTermination = { _ in sources.cancel() }
        return stream
    }

    /// Keeps the dispatch sources alive as long as the stream, and restores the default actions
    /// when it ends.
    private final class SignalSources: Sendable {
        private let sources: [any DispatchSourceSignal]

        init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }

        func cancel() {
            for source in sources { source.cancel() }
            for (number, _) in ServiceSignals.handled { signal(number, SIG_DFL) }
        }
    }
}
