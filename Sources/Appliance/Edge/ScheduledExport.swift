import Foundation
import Glibc
import Synchronization

/// `[export] schedule` in the running service: at each scheduled time the share window is
/// exported (sealed and signed) and delivered to every configured target, through the same
/// job as the button, so the export LED and the log say so.
///
/// The last scheduled time done is kept in the state directory (`scheduled-export.state`,
/// 0600), so a time missed while the node was off runs once at the next start and a restart
/// never runs one twice. The state is written after the job has handed its email to the outbox
/// (which then guarantees its delivery, with retries); a power cut in between gives, at
/// worst, one duplicate export, as the outbox itself prefers a duplicate to a loss.
/// Without any state yet (first start with a schedule), the current time is recorded and
/// nothing is exported until the next scheduled time.
public final class ScheduledExport: Sendable {
    public let schedule: ExportSchedule
    public let statePath: String
    private let lastDone = Mutex<Date?>(nil)

    public init(schedule: ExportSchedule, statePath: String) {
        self.schedule = schedule
        self.statePath = statePath
        lastDone.withLock { $0 = Self.read(statePath) }
    }

    /// The scheduled time to export for now, or nil. Records a first start.
    public func due(now: Date) -> Date? {
        lastDone.withLock { last in
            guard let done = last else {
                last = now
                try? Self.write(now, to: statePath)
                return nil
            }
            return schedule.due(now: now, lastDone: done)
        }
    }

    /// Records that the export for `slot` ran.
    public func done(_ slot: Date) throws(FileSystemError) {
        try Self.write(slot, to: statePath)
        lastDone.withLock { $0 = slot }
    }

    /// The last scheduled time done, as stored.
    public var last: Date? { lastDone.withLock { $0 } }

    static func read(_ path: String) -> Date? {
        guard let data = FileManager.default.contents(atPath: path),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            let seconds = Double(text.split(separator: " ").first ?? "")
        else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    static func write(_ date: Date, to path: String) throws(FileSystemError) {
        let text = "\(Int(date.timeIntervalSince1970)) \(UTCDate.iso(date)) last scheduled export\n"
        try AtomicFile.write(Data(text.utf8), to: path, mode: 0o600)
    }
}
