import Foundation
import Glibc
import Synchronization

/// `venue-beacon-status.txt` on the boot partition: the doctor's checklist and the node's status
/// line, so an installer who pulls the card and reads it on a laptop sees what the Pi sees, with
/// no network and no screen. Counts and states only: nothing personal.
///
/// Written whole (``InstalledFile``: a temporary file, fsync, rename, fsync the directory: never
/// half a file after a power cut), after start-up and then at most every ``minimumInterval``,
/// and only when something but the time changed or an hour passed, to spare the card.
public final class StatusFile: Sendable {
    public let path: String
    public let doctor: Doctor
    /// No two writes closer than this.
    public let minimumInterval: Duration
    /// An unchanged file is rewritten after this (the time in it says the node still runs).
    public let heartbeat: Duration

    public static let defaultInterval = Duration.seconds(300)

    private struct State {
        /// The last time the checklist was made (written or found unchanged): the rate limit.
        var lastCheck: ContinuousClock.Instant?
        var lastWrite: ContinuousClock.Instant?
        var lastBody: String?
        var failureLogged = false
    }

    private let state = Mutex(State())

    public init(doctor: Doctor, minimumInterval: Duration = StatusFile.defaultInterval, heartbeat: Duration = .seconds(3600)) {
        self.doctor = doctor
        self.path = (doctor.bootDirectory as NSString).appendingPathComponent(BootPartition.statusName)
        self.minimumInterval = minimumInterval
        self.heartbeat = heartbeat
    }

    /// The file's text. `statusLine`: the node's one-line summary (systemd's `STATUS=`), nil
    /// before the service has one.
    public static func text(report: DoctorReport, statusLine: String?, led: String?, writtenBy: String, at date: Date) -> String {
        header(writtenBy: writtenBy, at: date) + body(report: report, statusLine: statusLine, led: led)
    }

    static func header(writtenBy: String, at date: Date) -> String {
        "venue-beacon status, written by \(writtenBy) at \(UTCDate.readable(date)) (venue-beacon \(ProductVersion.string)).\n"
    }

    static func body(report: DoctorReport, statusLine: String?, led: String?) -> String {
        var lines = [
            "Refreshed at most every 5 minutes while the node runs; `venue-beacon doctor` on the node prints the same list.",
            "",
            "node: " + (statusLine ?? "no status yet (starting)"),
        ]
        if let led { lines.append("status LED: " + led) }
        lines.append("")
        return lines.joined(separator: "\n") + "\n" + report.text
    }

    /// Whether a write is due at `now` (the rate limit); the caller then runs the doctor.
    public func isDue(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { s in s.lastCheck.map { now - $0 >= minimumInterval } ?? true }
    }

    /// Writes the file when the rate limit allows and something changed (or the heartbeat is
    /// due). Returns what happened, for the log: nil when nothing was written and nothing failed.
    @discardableResult
    public func write(
        report: DoctorReport, statusLine: String?, led: String?, writtenBy: String = "the running service", date: Date = Date(),
        now: ContinuousClock.Instant = .now, force: Bool = false
    ) -> Outcome? {
        let body = Self.body(report: report, statusLine: statusLine, led: led)
        let due = state.withLock { s -> Bool in
            if force { return true }
            if let check = s.lastCheck, now - check < minimumInterval { return false }
            s.lastCheck = now
            guard let last = s.lastWrite else { return true }
            return body != s.lastBody || now - last >= heartbeat
        }
        guard due else { return nil }
        do throws(FileSystemError) {
            try InstalledFile.write(
                Array((Self.header(writtenBy: writtenBy, at: date) + body).utf8), to: path, access: .init(mode: 0o644, group: nil))
            state.withLock { s in
                s.lastCheck = now
                s.lastWrite = now
                s.lastBody = body
                s.failureLogged = false
            }
            return .written
        } catch {
            // Tried again after the interval; said once until it works.
            let first = state.withLock { s -> Bool in
                s.lastCheck = now
                defer { s.failureLogged = true }
                return !s.failureLogged
            }
            return first ? .failed(error) : nil
        }
    }

    public enum Outcome: Sendable, Equatable {
        case written
        case failed(FileSystemError)
    }

    /// What the status LED shows, in words, for the file.
    public static func describe(_ status: NodeStatus) -> String {
        switch status {
        case .running: "steady on (advertising and scanning)"
        case .starting: "slow blink (starting)"
        case .waitingForClockSync: "slow blink (waiting for the clock to synchronise)"
        case .closed: "a blip every 3 s (closed: outside opening hours)"
        case .bluetoothUnavailable: "fast blink (Bluetooth unavailable)"
        case .fault: "fast blink (a fault)"
        case .configError: "2 flashes, pause (the config on the card was refused)"
        case .bluetoothBlocked: "3 flashes, pause (Bluetooth blocked or missing)"
        }
    }
}
