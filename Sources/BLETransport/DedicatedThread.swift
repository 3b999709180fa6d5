import CBlueZ
import Glibc

/// Runs blocking work (opening an adapter, a transport owner's receive loop) on a thread of its
/// own, so it never occupies one of the Swift cooperative pool's few threads.
public enum DedicatedThread {
    /// Starts `body` on a new detached thread and returns at once.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
            cbluez_name_thread(body.name)
            body.run()
            return nil
        }, box)
        if result == 0 {
            pthread_detach(thread)
        } else {
            // No thread could be created (resource limits): run inline rather than lose the work.
            Unmanaged<Body>.fromOpaque(box).takeRetainedValue().run()
        }
    }

    /// Runs `body` on a new thread and waits for its result without blocking the caller's thread.
    public static func run<T: Sendable, E: Error>(
        name: String, _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            start(name: name) {
                do throws(E) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }
}
