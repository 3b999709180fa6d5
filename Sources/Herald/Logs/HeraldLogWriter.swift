import Foundation

/// Writes the Herald-format logs into a directory: rows appended to `contacts.csv`,
/// `detection.csv` and `statistics.csv` rewritten when they change. Events are buffered in memory
/// and written by ``flush()``, which the owner calls every few seconds: one write per flush, not
/// per advert (SD cards wear).
public struct HeraldLogWriter: Sendable {
    public let directory: String
    private var pendingContacts: [String] = []
    private var detection: DetectionLog
    private var statistics: StatisticsLog
    private var detectionChanged = true
    private var statisticsChanged = true

    public init(directory: String, detection: DetectionLog, statistics: StatisticsLog) {
        self.directory = directory
        self.detection = detection
        self.statistics = statistics
    }

    public mutating func record(_ event: SensorEvent, wallTime: Double) {
        let rows = ContactsLog.rows(for: event, wallTime: wallTime)
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
        if !pendingContacts.isEmpty || !FileManager.default.fileExists(atPath: contactsPath) {
            var text = FileManager.default.fileExists(atPath: contactsPath) ? "" : ContactsLog.header + "\n"
            for row in pendingContacts { text += row + "\n" }
            try Self.append(text, to: contactsPath)
            pendingContacts.removeAll(keepingCapacity: true)
        }
        if detectionChanged {
            try Data(detection.line.utf8).write(to: URL(fileURLWithPath: directory + "/detection.csv"), options: .atomic)
            detectionChanged = false
        }
        if statisticsChanged {
            try Data(statistics.content.utf8).write(to: URL(fileURLWithPath: directory + "/statistics.csv"), options: .atomic)
            statisticsChanged = false
        }
    }

    private static func append(_ text: String, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
