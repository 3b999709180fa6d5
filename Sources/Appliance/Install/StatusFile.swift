import Foundation
import Glibc

/// `venue-beacon-status.txt` on the boot partition: the doctor's checklist and the node's status
/// line, so an installer who pulls the card and reads it on a laptop sees what the Pi sees, with
/// no network and no screen. Counts and states only: nothing personal.
///
/// Two writers, both root, one after the other: the service's start (`config import
/// --status-file`, before the node runs) and `venue-beacon-status.timer` (`doctor
/// --status-file`, every ``refreshMinutes`` minutes). Written whole (``InstalledFile``: a
/// temporary file, fsync, rename, fsync the directory: never half a file after a power cut), and
/// by the timer only when something but the time in its first line changed or the file is
/// ``heartbeat`` seconds old, to spare the card: the file on the card is the only memory of what
/// was written last.
public struct StatusFile: Sendable {
    public let path: String
    /// An unchanged file is rewritten after this many seconds (the time in it says the node is
    /// still looked at).
    public let heartbeat: TimeInterval

    /// How often `venue-beacon-status.timer` runs the refresh (its `OnUnitActiveSec=`).
    public static let refreshMinutes = 5
    public static let defaultHeartbeat: TimeInterval = 3600
    /// A status file is a few kilobytes; a larger file there is not ours to compare.
    static let readLimit = 256 * 1024

    public init(directory: String, heartbeat: TimeInterval = StatusFile.defaultHeartbeat) {
        self.path = (directory as NSString).appendingPathComponent(BootPartition.statusName)
        self.heartbeat = heartbeat
    }

    /// The file's text. `statusLine`: the node's one-line summary (systemd's `STATUS=`, or what
    /// systemd says of the unit); `led`: what the status LED shows, when known.
    public static func text(report: DoctorReport, statusLine: String, led: String?, writtenBy: String, at date: Date) -> String {
        header(writtenBy: writtenBy, at: date) + body(report: report, statusLine: statusLine, led: led)
    }

    static func header(writtenBy: String, at date: Date) -> String {
        "venue-beacon status, written by \(writtenBy) at \(UTCDate.readable(date)) (venue-beacon \(ProductVersion.string)).\n"
    }

    static func body(report: DoctorReport, statusLine: String, led: String?) -> String {
        var lines = [
            "Written at each start of the service and looked at every \(refreshMinutes) minutes (rewritten when something changed, else hourly); `sudo venue-beacon doctor` on the node prints the same list.",
            "",
            "node: " + statusLine,
        ]
        if let led { lines.append("status LED: " + led) }
        lines.append("")
        return lines.joined(separator: "\n") + "\n" + report.text
    }

    /// Everything after the first line (the header, with the time): what is compared.
    static func body(ofFile text: String) -> Substring? {
        text.firstIndex(of: "\n").map { text[text.index(after: $0)...] }
    }

    /// Whether a new body must be written over the file as found (`existing`, nil: none or not
    /// readable; `age`: seconds since it was written, nil: not known). A file from the future (the
    /// clock was set back, as a Pi without a real-time clock does before it synchronises) is
    /// rewritten: its age says nothing.
    public static func isDue(body: String, existing: String?, age: TimeInterval?, heartbeat: TimeInterval) -> Bool {
        guard let existing, let age, age >= 0, let old = Self.body(ofFile: existing) else { return true }
        return old != body || age >= heartbeat
    }

    public enum Outcome: Sendable, Equatable {
        case written
        /// Nothing changed and the file is younger than the heartbeat: left as it was.
        case unchanged
        case failed(FileSystemError)
    }

    /// Writes the file when something changed or the heartbeat is due, or always (`force`).
    public func write(report: DoctorReport, statusLine: String, led: String?, writtenBy: String, date: Date = Date(), force: Bool = false) -> Outcome {
        let body = Self.body(report: report, statusLine: statusLine, led: led)
        if !force {
            let existing = (try? InstalledFile.read(path, limit: Self.readLimit)).flatMap { $0 }.flatMap { String(validating: $0, as: UTF8.self) }
            var info = stat()
            let age = stat(path, &info) == 0
                ? date.timeIntervalSince1970 - (Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9) : nil
            guard Self.isDue(body: body, existing: existing, age: age, heartbeat: heartbeat) else { return .unchanged }
        }
        do throws(FileSystemError) {
            try InstalledFile.write(
                Array((Self.header(writtenBy: writtenBy, at: date) + body).utf8), to: path, access: .init(mode: 0o644, group: nil))
            return .written
        } catch {
            return .failed(error)
        }
    }
}
