import BLEHost
import Foundation
import Testing

@testable import Herald

@Suite struct HeraldLogTests {
    let target = Target(id: TargetID(rawValue: 3), address: BluetoothAddress("4C:11:22:33:44:55")!, addressType: .random)
    let p1 = SensorPayload(kind: .herald, bytes: TestPayload.make(identifier: 1))
    let p2 = SensorPayload(kind: .herald, bytes: TestPayload.make(identifier: 2))

    @Test func timestampsAreAndroidsUTCFormat() {
        #expect(HeraldLogFormat.timestamp(0) == "1970-01-01 00:00:00.000+0000")
        #expect(HeraldLogFormat.timestamp(1_606_558_530.123) == "2020-11-28 10:15:30.123+0000")
        #expect(HeraldLogFormat.timestamp(1_709_210_096.5) == "2024-02-29 12:34:56.500+0000")
        #expect(HeraldLogFormat.timestamp(4_102_444_799.999) == "2099-12-31 23:59:59.999+0000")
    }

    @Test func csvQuotingFollowsHeraldsTextFileAndRFC4180() {
        #expect(HeraldLogFormat.csv("plain") == "plain")
        #expect(HeraldLogFormat.csv("a,b") == "\"a,b\"")
        #expect(HeraldLogFormat.csv("say \"hi\"") == "\"say \"\"hi\"\"\"")
        // R's read.table treats ' as a quote: Herald's TextFile quotes both apostrophes.
        #expect(HeraldLogFormat.csv("Erin's Stakehouse") == "\"Erin's Stakehouse\"")
        #expect(HeraldLogFormat.csv("Erin’s") == "\"Erin’s\"")
        #expect(HeraldLogFormat.fields("\"Erin's, Bar\",Linux,\"a \"\"b\"\"\",,x") == ["Erin's, Bar", "Linux", "a \"b\"", "", "x"])
    }

    @Test func contactsRowsPutTheMarkerInTheEventsColumn() {
        let t = "2020-11-28 10:15:30.000+0000,BLE,4C:11:22:33:44:55,"
        let time = 1_606_558_530.0
        var log = ContactsLog()
        #expect(log.rows(for: .detect(target, time: 1), wallTime: time) == [t + "1,,,,,,,"])
        // detectHerald (6) before each read of a Herald payload, as Herald for Android writes it.
        #expect(log.rows(for: .read(target, payload: p1, earlier: [], time: 1), wallTime: time) == [t + ",,,,,6,,", t + ",2,,,,,,AQAAAA"])
        let rpi = SensorPayload(kind: .gaen, bytes: Array(repeating: 7, count: 16))
        #expect(log.rows(for: .read(target, payload: rpi, earlier: [], time: 1), wallTime: time) == [t + ",2,,,,,,BwcHBw"])
        #expect(log.rows(for: .measure(target, rssi: -56, payload: nil, time: 1), wallTime: time) == [t + ",,3,,,,,RSSI:-56.0"])
        #expect(log.rows(for: .measure(target, rssi: -56, payload: nil, txPower: 12, time: 1), wallTime: time) == [t + ",,3,,,,,RSSI:-56.0[BLETransmitPower:12.0]"])
        #expect(log.rows(for: .measure(target, rssi: nil, payload: nil, time: 1), wallTime: time).isEmpty)
        #expect(log.rows(for: .share(target, payloads: [p1, p2], rssi: nil, time: 1), wallTime: time) == [t + ",,,4,,,,AQAAAA", t + ",,,4,,,,AgAAAA"])
        #expect(log.rows(for: .bluetoothState(.running, time: 1), wallTime: time).isEmpty)
        #expect(log.rows(for: .delete(target, time: 1), wallTime: time) == [t + ",,,,,,7,"])
        // Every row has the header's eleven columns.
        for row in log.rows(for: .detect(target, time: 1), wallTime: time) + log.rows(for: .delete(target, time: 1), wallTime: time) {
            #expect(row.split(separator: ",", omittingEmptySubsequences: false).count == ContactsLog.header.split(separator: ",").count)
        }
    }

    /// A Herald Android phone's address rotates; the node links it by its pseudo address (same
    /// target id). Its rows keep the first address until the target is deleted.
    @Test func oneIdPerTargetForItsWholeStay() {
        var log = ContactsLog()
        let rotated = Target(id: target.id, address: BluetoothAddress("5D:99:88:77:66:55")!, addressType: .random)
        let other = Target(id: TargetID(rawValue: 4), address: BluetoothAddress("5D:99:88:77:66:55")!, addressType: .random)
        let ids = [
            log.rows(for: .detect(target, time: 0), wallTime: 0),
            log.rows(for: .read(target, payload: p1, earlier: [], time: 0), wallTime: 1),
            log.rows(for: .measure(rotated, rssi: -60, payload: p1, time: 0), wallTime: 2),
            log.rows(for: .delete(rotated, time: 0), wallTime: 3),
        ].flatMap { $0 }.map { row in
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            return fields.count > 2 ? String(fields[2]) : "short row: \(row)"
        }
        #expect(ids.count == 5, "\(ids)")
        #expect(Set(ids) == ["4C:11:22:33:44:55"])
        #expect(log.followed == 0)
        // After deletion, an id is the address a target is first seen at again.
        #expect(log.rows(for: .detect(other, time: 0), wallTime: 4).first?.split(separator: ",", omittingEmptySubsequences: false)[2] == "5D:99:88:77:66:55")
    }

    @Test func detectionLineListsSortedShortNamesExceptOurOwn() throws {
        let own = try BeaconPayload(country: 826, state: 4, code: 123123, name: "Erin's Stakehouse").encoded()
        var log = DetectionLog(deviceName: "Erin's, Pi", operatingSystemVersion: "6.1", ownPayload: own)
        #expect(log.line == "\"Erin's, Pi\",Linux,6.1,BADz4A\n")
        let changes = [
            log.record(.read(target, payload: p2, earlier: [], time: 0)),
            log.record(.share(target, payloads: [p1, SensorPayload(kind: .herald, bytes: own)], rssi: nil, time: 0)),
            log.record(.read(target, payload: p1, earlier: [], time: 0)),
            log.record(.measure(target, rssi: -50, payload: p1, time: 0)),
        ]
        #expect(changes == [true, true, false, false])
        #expect(log.line == "\"Erin's, Pi\",Linux,6.1,BADz4A,AQAAAA,AgAAAA\n")
    }

    @Test func statisticsAreIntervalsBetweenEventsPerPayload() {
        var log = StatisticsLog(ownPayload: [])
        log.record(.read(target, payload: p1, earlier: [], time: 0), wallTime: 100)
        log.record(.measure(target, rssi: -60, payload: p1, time: 0), wallTime: 102)
        log.record(.measure(target, rssi: nil, payload: nil, time: 0), wallTime: 103)  // no payload: not counted
        log.record(.measure(target, rssi: nil, payload: p1, time: 0), wallTime: 104)  // no RSSI: not a measure
        log.record(.measure(target, rssi: -60, payload: p1, time: 0), wallTime: 105.0004)  // milliseconds, as Herald
        log.record(.share(target, payloads: [p1, p2], rssi: nil, time: 0), wallTime: 112)
        // p1: intervals 2, 3, 7; p2: only one event, not listed.
        #expect(log.content == "payload,count,mean,sd,min,max\nAQAAAA,3,4.0,\(2.6457513110645907),2.0,7.0\n")
    }

    @Test func writerAppendsContactsAndRewritesTheOthers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-logs-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var writer = HeraldLogWriter(
            directory: directory, detection: DetectionLog(deviceName: "pi", operatingSystemVersion: "1", ownPayload: []),
            statistics: StatisticsLog(ownPayload: []))
        writer.record(.detect(target, time: 0), wallTime: 0)
        writer.record(.read(target, payload: p1, earlier: [], time: 0), wallTime: 1)
        #expect(writer.pendingRows == 3)  // detect, detectHerald, read
        #expect(writer.flush(now: 3) == [])
        #expect(writer.pendingRows == 0)
        writer.record(.measure(target, rssi: -70, payload: p1, time: 0), wallTime: 2)
        #expect(writer.flush(now: 3) == [])
        #expect(writer.flush(now: 3) == [])

        let contacts = try String(contentsOfFile: directory + "/contacts.csv", encoding: .utf8)
        #expect(contacts.split(separator: "\n").map(String.init) == [
            ContactsLog.header,
            "1970-01-01 00:00:00.000+0000,BLE,4C:11:22:33:44:55,1,,,,,,,",
            "1970-01-01 00:00:01.000+0000,BLE,4C:11:22:33:44:55,,,,,,6,,",
            "1970-01-01 00:00:01.000+0000,BLE,4C:11:22:33:44:55,,2,,,,,,AQAAAA",
            "1970-01-01 00:00:02.000+0000,BLE,4C:11:22:33:44:55,,,3,,,,,RSSI:-70.0",
        ])
        #expect(try String(contentsOfFile: directory + "/detection.csv", encoding: .utf8) == "pi,Linux,1,,AQAAAA\n")
        #expect(try String(contentsOfFile: directory + "/statistics.csv", encoding: .utf8) == "payload,count,mean,sd,min,max\n")
        for name in ["contacts.csv", "detection.csv", "statistics.csv"] {
            let mode = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name)")
        }

        // A restart keeps the detection list, as Herald does.
        var restarted = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [])
        restarted.record(.read(target, payload: p2, earlier: [], time: 0), wallTime: 10)
        #expect(restarted.flush(now: 11) == [])
        #expect(try String(contentsOfFile: directory + "/detection.csv", encoding: .utf8) == "pi,Linux,1,,AQAAAA,AgAAAA\n")
    }

    /// One UTC day per set of files: the day's files move into a folder named after it when an
    /// event of a later day arrives (a restart included), and a day's folder goes once its first
    /// moment is `recording_days` old, so no row outlives the diary's visits.
    @Test func eachDayGetsItsFolderAndFoldersGoWithRecordingDays() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-days-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let day = 86_400.0
        let d0 = 20_000 * day  // 2024-10-04 00:00 UTC
        func read(_ path: String) throws -> String { try String(contentsOfFile: directory + "/" + path, encoding: .utf8) }

        var writer = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [], keepingDays: 2)
        writer.record(.read(target, payload: p1, earlier: [], time: 0), wallTime: d0 + day - 1)  // 23:59:59
        #expect(writer.flush(now: d0 + day - 1) == [])
        writer.record(.read(target, payload: p2, earlier: [], time: 0), wallTime: d0 + day + 1)  // the next day
        #expect(writer.flush(now: d0 + day + 1) == [])
        #expect(try read("2024-10-04/contacts.csv").contains("2024-10-04 23:59:59.000+0000"))
        #expect(try !read("2024-10-04/contacts.csv").contains("2024-10-05"))
        #expect(try read("2024-10-04/detection.csv") == "pi,Linux,1,,AQAAAA\n")
        #expect(try read("contacts.csv").split(separator: "\n").dropFirst().allSatisfy { $0.hasPrefix("2024-10-05") })
        #expect(try read("detection.csv") == "pi,Linux,1,,AgAAAA\n")  // the new day starts afresh
        let folderMode = try FileManager.default.attributesOfItem(atPath: directory + "/2024-10-04")[.posixPermissions] as? Int
        #expect(folderMode == 0o700)
        #expect(try FileManager.default.attributesOfItem(atPath: directory + "/2024-10-04/contacts.csv")[.posixPermissions] as? Int == 0o600)

        // A restart two days later: the top files (2024-10-05) move into their folder at the
        // first event of 2024-10-07; 2024-10-04 (first moment 3 days ago) and 2024-10-05 (2 days)
        // are deleted, 2024-10-06 has no rows.
        var restarted = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [], keepingDays: 2)
        restarted.record(.read(target, payload: p1, earlier: [], time: 0), wallTime: d0 + 3 * day + 10)
        #expect(restarted.expiredDays(now: d0 + 3 * day + 10, keepingDays: 2) == ["2024-10-04"])
        #expect(restarted.flush(now: d0 + 3 * day + 10) == [])
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["contacts.csv", "detection.csv", "statistics.csv"])
        #expect(try read("contacts.csv").split(separator: "\n").dropFirst().allSatisfy { $0.hasPrefix("2024-10-07") })

        // Kept forever without a limit.
        var forever = HeraldLogWriter(directory: directory, deviceName: "pi", softwareVersion: "1", ownPayload: [])
        forever.record(.read(target, payload: p2, earlier: [], time: 0), wallTime: d0 + 4 * day)
        #expect(forever.flush(now: d0 + 400 * day) == [])
        #expect(FileManager.default.fileExists(atPath: directory + "/2024-10-07/contacts.csv"))
    }
}
