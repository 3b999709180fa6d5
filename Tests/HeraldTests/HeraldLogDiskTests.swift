import BLEHost
import Foundation
import Glibc
import Testing

@testable import Herald

/// The Herald logs on a disk that fills up, and within their size budget (issue 24 item 9): rows
/// that cannot be written are dropped and counted, never kept (a full disk once grew the writer to
/// 608 MB), the failure is said once per run of failures, and writing resumes when there is room.
/// The full disk is a small tmpfs the test mounts (the tests run as root, as CI does).
@Suite(.serialized) struct HeraldLogDiskTests {
    let target = Target(id: TargetID(rawValue: 3), address: BluetoothAddress("4C:11:22:33:44:55")!, addressType: .random)
    let p1 = SensorPayload(kind: .herald, bytes: TestPayload.make(identifier: 1))
    let p2 = SensorPayload(kind: .herald, bytes: TestPayload.make(identifier: 2))
    /// 2024-10-04 00:00 UTC.
    let d0 = 20_000 * 86_400.0
    let day = 86_400.0
    /// Every measurement row at -70 dBm is 69 characters and a line feed.
    let rowBytes = 70

    /// A tmpfs of `size` mounted on a new directory; `fill()` leaves it without a free byte.
    struct Tmpfs {
        let path: String

        init(size: String) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-full-\(UInt32.random(in: 0...UInt32.max))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let mount = Process()
            mount.executableURL = URL(fileURLWithPath: "/bin/mount")
            mount.arguments = ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]
            try mount.run()
            mount.waitUntilExit()
            try #require(mount.terminationStatus == 0, "mounting a tmpfs needs root, as CI runs")
        }

        /// Writes `filler` until the disk is full; returns its size.
        @discardableResult
        func fill() throws -> Int {
            let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_APPEND, 0o600)
            try #require(fd >= 0)
            defer { close(fd) }
            let block = [UInt8](repeating: 0, count: 4096)
            var total = 0
            while true {
                let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                total += n
            }
            try #require(errno == ENOSPC)
            return total
        }

        /// Frees `bytes` of the filler (all of it when nil).
        func free(_ bytes: Int? = nil) throws {
            guard let bytes else {
                try FileManager.default.removeItem(atPath: path + "/filler")
                return
            }
            let size = try #require(FileManager.default.attributesOfItem(atPath: path + "/filler")[.size] as? Int)
            try #require(truncate(path + "/filler", off_t(size - bytes)) == 0)
        }

        func unmount() {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [path]
            try? umount.run()
            umount.waitUntilExit()
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    func measure(_ writer: inout HeraldLogWriter, _ count: Int, from time: Double) {
        for i in 0..<count { writer.record(.measure(target, rssi: -70, payload: nil, time: 0), wallTime: time + Double(i) / 100) }
    }

    func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    func size(_ path: String) -> Int? { (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int }

    /// Rows of a contacts.csv after its header.
    func rows(_ path: String) throws -> [Substring] {
        let lines = try read(path).split(separator: "\n")
        #expect(lines.first.map(String.init) == ContactsLog.header, "\(path)")
        return Array(lines.dropFirst())
    }

    /// A full disk: every flush fails, its rows are dropped and counted, nothing stays pending,
    /// one notice for the whole run of failures; a write that half succeeds leaves no half row;
    /// with room again the next flush writes, says how many rows the failures cost, and the
    /// detection and statistics files are written as they are now.
    @Test func aFullDiskDropsAndCountsRowsSaysSoOnceAndWritingResumes() throws {
        let disk = try Tmpfs(size: "256k")
        defer { disk.unmount() }
        let directory = disk.path + "/herald"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try disk.fill()
        let contacts = directory + "/contacts.csv"
        let reason = "cannot write \(contacts): No space left on device"

        var writer = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [])
        writer.record(.read(target, payload: p1, earlier: [], time: 0), wallTime: d0)  // detectHerald and read
        measure(&writer, 98, from: d0 + 1)
        #expect(writer.pendingRows == 100)
        #expect(writer.flush(now: d0 + 2) == [.failing(droppedRows: 100, reason: reason)])
        #expect(writer.pendingRows == 0)
        #expect(writer.droppedRows == 100)
        #expect(writer.failedFlushes == 1)
        #expect(writer.failure == reason)
        #expect(writer.flush(now: d0 + 3) == [])  // nothing new: no second notice

        // Ten more flushes of 1,000 rows: nothing kept, nothing said.
        for round in 1...10 {
            measure(&writer, 1000, from: d0 + Double(round) * 10)
            #expect(writer.pendingRows == 1000)
            #expect(writer.flush(now: d0 + Double(round) * 10 + 9) == [], "round \(round)")
            #expect(writer.pendingRows == 0, "round \(round)")
        }
        #expect(writer.droppedRows == 10_100)
        #expect(writer.droppedOverBudget == 0)
        #expect(writer.failedFlushes == 12)
        #expect(size(contacts) == 0)  // created, never a byte: not even a header without its rows

        // One page free: the append gets 4,096 of its 7,072 bytes in before the disk is full; the
        // file is cut back, so the next row never joins half of one.
        try disk.free(4096)
        measure(&writer, 100, from: d0 + 200)
        #expect(writer.flush(now: d0 + 201) == [])
        #expect(size(contacts) == 0)
        #expect(writer.droppedRows == 10_200)

        // Room again: written, said once, with the count of the whole run.
        try disk.free()
        measure(&writer, 3, from: d0 + 300)
        #expect(writer.flush(now: d0 + 301) == [.writingAgain(droppedRows: 10_200)])
        #expect(writer.failure == nil)
        #expect(writer.droppedRows == 10_200)
        #expect(try rows(contacts) == [
            "2024-10-04 00:05:00.000+0000,BLE,4C:11:22:33:44:55,,,3,,,,,RSSI:-70.0",
            "2024-10-04 00:05:00.010+0000,BLE,4C:11:22:33:44:55,,,3,,,,,RSSI:-70.0",
            "2024-10-04 00:05:00.020+0000,BLE,4C:11:22:33:44:55,,,3,,,,,RSSI:-70.0",
        ])
        #expect(try read(directory + "/detection.csv") == "pi,Linux,1,,AQAAAA\n")
        #expect(try read(directory + "/statistics.csv") == StatisticsLog.header + "\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["contacts.csv", "detection.csv", "statistics.csv"])

        // The next failure after a success is said again, with that flush's rows (7,000 bytes:
        // more than the room left in contacts.csv's last page, which is cut back to 3 rows).
        try disk.fill()
        measure(&writer, 100, from: d0 + 400)
        #expect(writer.flush(now: d0 + 401) == [.failing(droppedRows: 100, reason: reason)])
        #expect(writer.droppedRows == 10_300)
        #expect(try rows(contacts).count == 3)
    }

    /// A day that ends on a full disk cannot move into its folder: the current day's rows are
    /// dropped (they would land in the ended day's files), and days that end meanwhile get no
    /// folder (nothing of them was written). With room, the ended day moves into its folder with
    /// its own detection list and the current day starts at the top.
    @Test func aDayThatEndsOnAFullDiskGetsItsFolderWhenThereIsRoom() throws {
        let disk = try Tmpfs(size: "256k")
        defer { disk.unmount() }
        let directory = disk.path + "/herald"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

        var writer = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [])
        writer.record(.read(target, payload: p1, earlier: [], time: 0), wallTime: d0 + 10)
        #expect(writer.flush(now: d0 + 11) == [])
        try disk.fill()

        writer.record(.read(target, payload: p2, earlier: [], time: 0), wallTime: d0 + day + 10)  // 2024-10-05
        #expect(writer.flush(now: d0 + day + 11) == [
            .failing(droppedRows: 2, reason: "cannot write \(directory)/detection.csv.tmp: No space left on device")
        ])
        measure(&writer, 5, from: d0 + day + 20)
        #expect(writer.flush(now: d0 + day + 21) == [])
        writer.record(.read(target, payload: p2, earlier: [], time: 0), wallTime: d0 + 2 * day + 10)  // 2024-10-06
        #expect(writer.pendingRows == 2)
        #expect(writer.flush(now: d0 + 2 * day + 11) == [])
        #expect(writer.pendingRows == 0)
        #expect(writer.droppedRows == 9)
        #expect(try rows(directory + "/contacts.csv").count == 2)  // still 2024-10-04's, alone

        try disk.free()
        #expect(writer.flush(now: d0 + 2 * day + 21) == [.writingAgain(droppedRows: 9)])
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["2024-10-04", "contacts.csv", "detection.csv", "statistics.csv"])
        #expect(try rows(directory + "/2024-10-04/contacts.csv") == [
            "2024-10-04 00:00:10.000+0000,BLE,4C:11:22:33:44:55,,,,,,6,,",
            "2024-10-04 00:00:10.000+0000,BLE,4C:11:22:33:44:55,,2,,,,,,AQAAAA",
        ])
        #expect(try read(directory + "/2024-10-04/detection.csv") == "pi,Linux,1,,AQAAAA\n")
        #expect(try rows(directory + "/contacts.csv") == [])
        #expect(try read(directory + "/detection.csv") == "pi,Linux,1,,AgAAAA\n")

        // The next day moves on as usual.
        measure(&writer, 1, from: d0 + 3 * day)
        #expect(writer.flush(now: d0 + 3 * day + 1) == [])
        #expect(FileManager.default.fileExists(atPath: directory + "/2024-10-06/contacts.csv"))
        #expect(try rows(directory + "/contacts.csv").count == 1)
    }

    /// The budget: past it, whole day folders go, oldest first; when the current day alone passes
    /// it, the rows that fit are written, the rest of the day's rows are dropped and counted (said
    /// once), and the next day writes again, the over-budget day's folder going first.
    @Test func theBudgetDeletesOldDaysFirstAndStopsADayThatPassesItAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-budget-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func folderBytes(_ name: String) throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: directory + "/" + name).reduce(0) { $0 + (size(directory + "/" + name + "/" + $1) ?? 0) }
        }
        func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: directory).sorted() }

        // Three days of 20 rows without a budget: two folders and the top files.
        var unlimited = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [])
        for n in 0..<3 {
            measure(&unlimited, 20, from: d0 + Double(n) * day + 60)
            #expect(unlimited.flush(now: d0 + Double(n) * day + 61) == [])
        }
        #expect(try names() == ["2024-10-04", "2024-10-05", "contacts.csv", "detection.csv", "statistics.csv"])
        // A day's set: header 72, 20 rows of 70, detection.csv 12 ("pi,Linux,1,\n"), statistics.csv 30.
        let set = 72 + 20 * rowBytes + 12 + 30
        #expect(set == 1514)
        #expect(try folderBytes("2024-10-04") == set)
        #expect(try folderBytes("2024-10-05") == set)

        let budget = 3 * set + 700  // 5,242 bytes
        var writer = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [], budgetBytes: budget)
        // 20 more rows (1,400 bytes) on 2024-10-06 need the oldest day's room, and only that.
        measure(&writer, 20, from: d0 + 2 * day + 120)
        #expect(writer.flush(now: d0 + 2 * day + 121) == [.deletedForBudget(folders: ["2024-10-04"], budgetBytes: budget)])
        #expect(try names() == ["2024-10-05", "contacts.csv", "detection.csv", "statistics.csv"])
        measure(&writer, 20, from: d0 + 2 * day + 180)
        #expect(writer.flush(now: d0 + 2 * day + 181) == [.deletedForBudget(folders: ["2024-10-05"], budgetBytes: budget)])
        #expect(try names() == ["contacts.csv", "detection.csv", "statistics.csv"])
        #expect(writer.droppedRows == 0)
        #expect(writer.foldersDeletedForBudget == 2)

        // The day alone: 60 rows (4,314 bytes with its files) leave room for 13 of 20 more (928 bytes).
        measure(&writer, 20, from: d0 + 2 * day + 240)
        #expect(writer.flush(now: d0 + 2 * day + 241) == [.dayOverBudget(day: "2024-10-06", budgetBytes: budget)])
        #expect(writer.droppedRows == 7)
        #expect(writer.droppedOverBudget == 7)
        #expect(try rows(directory + "/contacts.csv").count == 73)
        #expect(size(directory + "/contacts.csv") == 72 + 73 * rowBytes)
        #expect(try folderBytes("") <= budget)
        // The rest of the day is dropped as it comes: nothing pending, nothing written, said once.
        measure(&writer, 5, from: d0 + 2 * day + 300)
        #expect(writer.pendingRows == 0)
        #expect(writer.droppedRows == 12)
        #expect(writer.flush(now: d0 + 2 * day + 301) == [])
        #expect(try rows(directory + "/contacts.csv").count == 73)
        #expect(writer.failure == nil)
        #expect(writer.failedFlushes == 0)

        // The next day writes again; the over-budget day's folder makes room for it.
        measure(&writer, 5, from: d0 + 3 * day + 60)
        #expect(writer.flush(now: d0 + 3 * day + 61) == [.deletedForBudget(folders: ["2024-10-06"], budgetBytes: budget)])
        #expect(try names() == ["contacts.csv", "detection.csv", "statistics.csv"])
        #expect(try rows(directory + "/contacts.csv").count == 5)
        #expect(try rows(directory + "/contacts.csv").allSatisfy { $0.hasPrefix("2024-10-07") })
        #expect(writer.droppedRows == 12)
    }

    /// A budget lowered at a restart is applied at the first flush, with no row to write: the
    /// oldest days go until the directory fits.
    @Test func aLowerBudgetAtARestartDeletesTheOldestDaysAtOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-budget-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var unlimited = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [])
        for n in 0..<4 {
            measure(&unlimited, 20, from: d0 + Double(n) * day + 60)
            #expect(unlimited.flush(now: d0 + Double(n) * day + 61) == [])
        }
        // 4 sets of 1,514 bytes; a budget of 2.5 sets keeps the newest folder and the top files.
        var writer = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [], budgetBytes: 1514 * 5 / 2)
        #expect(writer.flush(now: d0 + 3 * day + 100) == [.deletedForBudget(folders: ["2024-10-04", "2024-10-05"], budgetBytes: 3785)])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["2024-10-06", "contacts.csv", "detection.csv", "statistics.csv"])
        #expect(writer.droppedRows == 0)
    }
}
