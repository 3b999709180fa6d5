import Synchronization

/// Lets an export ask the running service to write its diary first. The live diary batches its
/// commits (check-ins within `commit_seconds`, open visits every 10 minutes) to spare the SD
/// card; an export taken when a contact tracer calls must still include who checked in a minute
/// ago. `venue-beacon run` makes one and gives it to the service (which attaches its recorder
/// while it runs) and to the edge's export job (button and SIGUSR1).
public final class DiaryFlusher: Sendable {
    private let recorder = Mutex<Recorder?>(nil)

    public init() {}

    func attach(_ recorder: Recorder?) {
        self.recorder.withLock { $0 = recorder }
    }

    /// Returns once the running service has committed everything it holds (at once when no
    /// service runs; a failed write is logged by the service and the export goes on).
    public func flush() async {
        let recorder = self.recorder.withLock { $0 }
        await recorder?.flush()
    }
}
