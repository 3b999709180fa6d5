import Foundation
import Glibc

/// Writes the Herald-format logs into a directory: rows appended to `contacts.csv`,
/// `detection.csv` and `statistics.csv` rewritten when they change. Events are buffered in memory
/// and written by ``flush()``, which the owner calls every few seconds: one write per flush, not
/// per advert (SD cards wear). `venue-beacon run` and `venue-beacon simulate --herald-logs` both
/// write through it. The files name phones by pseudonymous ids with times: they are created 0600.
public struct HeraldLogWriter: Sendable {
    public let directory: String
    private var contacts = ContactsLog()
    private var pendingContacts: [String] = []
    private var detection: DetectionLog
    private var statistics: StatisticsLog
    private var detectionChanged = true
    private var statisticsChanged = true

    /// `detection` starts from the list a `detection.csv` already in `directory` holds (Herald
    /// keeps it across restarts).
    public init(directory: String, detection: DetectionLog, statistics: StatisticsLog) {
        self.directory = directory
        var detection = detection
        if let previous = try? String(contentsOfFile: directory + "/detection.csv", encoding: .utf8) {
            detection.restore(from: previous)
        }
        self.detection = detection
        self.statistics = statistics
    }

    /// The logs of the node whose own (venue beacon) payload is `ownPayload`, on a device named
    /// `deviceName` running `softwareVersion`.
    public init(directory: String, deviceName: String, softwareVersion: String, ownPayload: [UInt8]) {
        self.init(
            directory: directory,
            detection: DetectionLog(deviceName: deviceName, operatingSystemVersion: softwareVersion, ownPayload: ownPayload),
            statistics: StatisticsLog(ownPayload: ownPayload))
    }

    public mutating func record(_ event: SensorEvent, wallTime: Double) {
        let rows = contacts.rows(for: event, wallTime: wallTime)
        pendingContacts.append(contentsOf: rows)
        if detection.record(event) { detectionChanged = true }
        statistics.record(event, wallTime: wallTime)
        if !rows.isEmpty { statisticsChanged = true }
    }

    /// Rows waiting for the next flush.
    public var pendingRows: Int { pendingContacts.count }

    /// Writes what changed since the last flush. On an error nothing is lost: the rows stay
    /// pending for the next flush.
    public mutating func flush() throws {
        let contactsPath = directory + "/contacts.csv"
        let exists = FileManager.default.fileExists(atPath: contactsPath)
        if !pendingContacts.isEmpty || !exists {
            var text = exists ? "" : ContactsLog.header + "\n"
            for row in pendingContacts { text += row + "\n" }
            try Self.append(text, to: contactsPath)
            pendingContacts.removeAll(keepingCapacity: true)
        }
        if detectionChanged {
            try Self.replace(directory + "/detection.csv", with: detection.line)
            detectionChanged = false
        }
        if statisticsChanged {
            try Self.replace(directory + "/statistics.csv", with: statistics.content)
            statisticsChanged = false
        }
    }

    private static func append(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HeraldLogError(path: path, code: errno) }
        defer { close(fd) }
        try write(text, to: fd, path: path)
    }

    /// A new file beside `path`, 0600, renamed over it.
    private static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HeraldLogError(path: temporary, code: errno) }
        do {
            try write(text, to: fd, path: temporary)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else { throw HeraldLogError(path: path, code: errno) }
    }

    private static func write(_ text: String, to fd: Int32, path: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw HeraldLogError(path: path, code: errno)
            }
            offset += n
        }
    }
}

/// A Herald log file that could not be written: its path and errno.
public struct HeraldLogError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32

    public var description: String { "cannot write \(path): \(String(cString: strerror(code)))" }
}
