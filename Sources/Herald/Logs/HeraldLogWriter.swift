import CivilDate
import Foundation
import Glibc

/// Writes the Herald-format logs into a directory: rows appended to `contacts.csv`,
/// `detection.csv` and `statistics.csv` rewritten when they change. Events are buffered in memory
/// and written by ``flush(now:)``, which the owner calls every few seconds: one write per flush,
/// not per advert (SD cards wear). `venue-beacon run` and `venue-beacon simulate --herald-logs`
/// both write through it. The files name phones by pseudonymous ids with times: they are created
/// 0600.
///
/// One UTC day per set of files: the three files at the top of the directory hold the current
/// day; when an event of a later day arrives, the day's files move into a folder named after it
/// (`2026-11-24/`, 0700: a complete set Herald's analysis reads on its own) and the next day
/// starts afresh, its detection list and statistics included. With `keepingDays` (the diary's
/// `recording_days`) a day's folder is deleted once its first moment is that many days old, so
/// no row outlives `recording_days` (the last rows of a day go up to a day early).
public struct HeraldLogWriter: Sendable {
    public let directory: String
    /// Days a day's logs are kept; nil keeps them.
    public let keepingDays: Int?
    private var contacts = ContactsLog()
    private var pendingContacts: [String] = []
    private var detection: DetectionLog
    private var statistics: StatisticsLog
    /// What a new day starts from.
    private let freshDetection: DetectionLog
    private let freshStatistics: StatisticsLog
    private var detectionChanged = true
    private var statisticsChanged = true
    /// The UTC day (days since 1970) of the rows at the top of the directory; nil before any.
    private var day: Int?
    /// Days that ended since the last flush, oldest first, with their last rows and files.
    private var endedDays: [EndedDay] = []
    /// When the next flush looks for days to delete (the first flush does).
    private var nextPurge = -Double.infinity

    private struct EndedDay: Sendable {
        var day: Int
        var rows: [String]
        var detection: String
        var statistics: String
    }

    /// `detection` starts from the list a `detection.csv` already in `directory` holds (Herald
    /// keeps it across restarts), and the day from the first row of a `contacts.csv` there.
    public init(directory: String, detection: DetectionLog, statistics: StatisticsLog, keepingDays: Int? = nil) {
        self.directory = directory
        self.keepingDays = keepingDays
        freshDetection = detection
        freshStatistics = statistics
        var detection = detection
        if let previous = try? String(contentsOfFile: directory + "/detection.csv", encoding: .utf8) {
            detection.restore(from: previous)
        }
        self.detection = detection
        self.statistics = statistics
        day = Self.firstRowDay(directory + "/contacts.csv")
    }

    /// The logs of the node whose own (venue beacon) payload is `ownPayload`, on a device named
    /// `deviceName` running `softwareVersion`.
    public init(directory: String, deviceName: String, softwareVersion: String, ownPayload: [UInt8], keepingDays: Int? = nil) {
        self.init(
            directory: directory,
            detection: DetectionLog(deviceName: deviceName, operatingSystemVersion: softwareVersion, ownPayload: ownPayload),
            statistics: StatisticsLog(ownPayload: ownPayload), keepingDays: keepingDays)
    }

    public mutating func record(_ event: SensorEvent, wallTime: Double) {
        let eventDay = Self.day(of: wallTime)
        if let day, eventDay > day {
            endedDays.append(EndedDay(day: day, rows: pendingContacts, detection: detection.line, statistics: statistics.content))
            pendingContacts.removeAll()
            detection = freshDetection
            statistics = freshStatistics
            detectionChanged = true
            statisticsChanged = true
        }
        if day.map({ eventDay > $0 }) ?? true { day = eventDay }
        let rows = contacts.rows(for: event, wallTime: wallTime)
        pendingContacts.append(contentsOf: rows)
        if detection.record(event) { detectionChanged = true }
        statistics.record(event, wallTime: wallTime)
        if !rows.isEmpty { statisticsChanged = true }
    }

    /// Rows waiting for the next flush.
    public var pendingRows: Int { pendingContacts.count }

    /// Writes what changed since the last flush (`now`: the wall clock, Unix seconds): first the
    /// days that ended, each completed and moved into its folder, then the current day; deletes
    /// the folders older than ``keepingDays`` (hourly). On an error nothing is lost: what was not
    /// written stays pending for the next flush.
    public mutating func flush(now: Double) throws {
        while let ended = endedDays.first {
            try write(rows: ended.rows, detection: ended.detection, statistics: ended.statistics)
            try moveTopFiles(into: ended.day)
            endedDays.removeFirst()
        }
        if !pendingContacts.isEmpty || !FileManager.default.fileExists(atPath: directory + "/contacts.csv") {
            try write(rows: pendingContacts, detection: nil, statistics: nil)
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
        if let keepingDays, now >= nextPurge {
            try purge(now: now, keepingDays: keepingDays)
            nextPurge = now + 3600
        }
    }

    /// The folders of the days whose first moment is at least `keepingDays` days before `now`.
    public func expiredDays(now: Double, keepingDays: Int) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { name in
            guard let day = Self.day(named: name) else { return false }
            return Double(day) * 86_400 + Double(keepingDays) * 86_400 <= now
        }.sorted()
    }

    private func purge(now: Double, keepingDays: Int) throws {
        for name in expiredDays(now: now, keepingDays: keepingDays) {
            do {
                try FileManager.default.removeItem(atPath: directory + "/" + name)
            } catch {
                throw HeraldLogError(path: directory + "/" + name, code: EIO)
            }
        }
    }

    private func write(rows: [String], detection: String?, statistics: String?) throws {
        let contactsPath = directory + "/contacts.csv"
        let exists = FileManager.default.fileExists(atPath: contactsPath)
        if !rows.isEmpty || !exists {
            var text = exists ? "" : ContactsLog.header + "\n"
            for row in rows { text += row + "\n" }
            try Self.append(text, to: contactsPath)
        }
        if let detection { try Self.replace(directory + "/detection.csv", with: detection) }
        if let statistics { try Self.replace(directory + "/statistics.csv", with: statistics) }
    }

    /// Moves the three files into the day's folder (`YYYY-MM-DD`, or `YYYY-MM-DD.N` when one
    /// exists already: the clock went back).
    private func moveTopFiles(into day: Int) throws {
        let name = String(HeraldLogFormat.timestamp(Double(day) * 86_400).prefix(10))
        var folder = directory + "/" + name
        var n = 1
        while FileManager.default.fileExists(atPath: folder) {
            folder = directory + "/" + name + ".\(n)"
            n += 1
        }
        guard mkdir(folder, 0o700) == 0 else { throw HeraldLogError(path: folder, code: errno) }
        for file in ["contacts.csv", "detection.csv", "statistics.csv"] {
            let from = directory + "/" + file
            guard access(from, F_OK) == 0 else { continue }
            guard rename(from, folder + "/" + file) == 0 else { throw HeraldLogError(path: from, code: errno) }
        }
    }

    static func day(of wallTime: Double) -> Int { Int((wallTime / 86_400).rounded(.down)) }

    /// The day of a folder named `YYYY-MM-DD` (or `YYYY-MM-DD.N`).
    static func day(named name: String) -> Int? {
        guard name.count >= 10 else { return nil }
        let date = name.prefix(10)
        guard name.count == 10 || name.dropFirst(10).first == "." else { return nil }
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.map(\.count) == [4, 2, 2], parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        let civil = CivilDate(year: year, month: month, day: day)
        return civil.isValid ? civil.daysSinceEpoch : nil
    }

    /// The day of the first row of a `contacts.csv` (its time starts `YYYY-MM-DD`).
    static func firstRowDay(_ path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 4096) else { return nil }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count >= 2 else { return nil }
        return day(named: String(lines[1].prefix(10)))
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
