import Foundation
import GRDB
import Testing
import VenueDiary

/// `venue-beacon diary …` and `export` end to end: the real binary, a real config file, a real
/// SQLite diary.
@Suite struct DiaryCommandTests {
    /// A temporary venue with its own config and diary.
    struct Venue {
        let dir: TemporaryDirectory
        let config: String
        var diary: String { dir.path("diary.sqlite") }

        init(diaryKeys: String = "") throws {
            dir = try TemporaryDirectory("diary-cli")
            config = try dir.write("venue-beacon.toml", """
                [venue]
                country = 826
                state = 4
                code = 123123
                name = "Erin's Stakehouse"
                [diary]
                path = "\(dir.path("diary.sqlite"))"
                \(diaryKeys)
                """)
        }

        func run(_ args: [String]) throws -> ProcessRunner.Result {
            try ProcessRunner.venueBeacon(args + ["--config", config])
        }

        /// SQLite's own verdict on a file.
        static func integrityOK(_ path: String) throws -> Bool {
            var config = Configuration()
            config.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok"
        }
    }

    /// Two phones: one stays 10 minutes (a visit), one walks past for 60 s (not a visit).
    static let twoPhones = """
        time,kind,payload,rssi
        1763805600,herald,aa01,-60
        1763805660,herald,aa01,-62
        1763805600,gaen,bb020000000000000000000000000000,-70
        1763805660,gaen,bb020000000000000000000000000000,-71
        1763805900,herald,aa01,-58
        1763806200,herald,aa01,-61
        """

    /// What an interrupted replay leaves (visits written at check-in, never closed) is closed at
    /// the next replay, purged by its last sighting, and never exported as present now.
    @Test func visitsAnInterruptedReplayLeftOpenAreClosedAtTheNextUse() throws {
        let venue = try Venue(diaryKeys: "share_days = \"all\"\nrecording_days = 31")
        defer { venue.dir.remove() }
        let now = 1_795_197_600.0
        let store = try DiaryStore(path: venue.diary)
        try store.save([
            Visit(kind: .herald, payload: [0xAA, 1], checkIn: now - 7200, lastSeen: now - 3600, samples: 3, rssiMax: -50, rssiSum: -150),
            Visit(kind: .herald, payload: [0xAA, 2], checkIn: now - 40 * 86_400, lastSeen: now - 39 * 86_400, samples: 3, rssiMax: -50, rssiSum: -150),
        ])
        let nowOption = ["--now", TimeText.iso8601(now)]
        // The export, read-only, shows the abandoned visit closed at its last sighting.
        let export = try venue.run(["export"] + nowOption)
        #expect(export.status == 0, "\(export.output)")
        #expect(export.stdout.contains(",aa01,\(TimeText.iso8601(now - 7200)),\(TimeText.iso8601(now - 3600)),3600,"), "\(export.stdout)")
        // A purge closes them first, then takes the one last seen before recording_days.
        let purge = try venue.run(["diary", "purge"] + nowOption)
        #expect(purge.status == 0, "\(purge.output)")
        #expect(purge.stdout.contains("closed 2 abandoned open visits at their last sighting"), "\(purge.stdout)")
        #expect(purge.stdout.contains("purged 1 visits"), "\(purge.stdout)")
        let left = try DiaryStore(path: venue.diary, readOnly: true).visits()
        #expect(left.map(\.payload) == [[0xAA, 1]] && left.first?.checkOut == now - 3600)
        // A replay does the same for what it finds open.
        try DiaryStore(path: venue.diary).save([
            Visit(kind: .herald, payload: [0xAA, 3], checkIn: now - 7200, lastSeen: now - 3600, samples: 3, rssiMax: -50, rssiSum: -150)
        ])
        let file = try venue.dir.write("one.csv", "time,kind,payload,rssi\n\(Int(now) - 60),herald,bb01,-60\n")
        let replay = try venue.run(["diary", "replay", file] + nowOption)
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.stdout.contains("closed 1 visits an interrupted replay had left open, at their last sighting"), "\(replay.stdout)")
        #expect(try DiaryStore(path: venue.diary, readOnly: true).openVisits().isEmpty)
    }

    @Test func replayStatsAndExport() throws {
        let venue = try Venue(diaryKeys: "share_days = 14")
        defer { venue.dir.remove() }
        let file = try venue.dir.write("s.csv", Self.twoPhones)
        let replay = try venue.run(["diary", "replay", file])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.stdout.contains("replayed 6 sightings"))
        #expect(replay.stdout.contains("visits: 1 checked in, 1 walk-pasts not recorded"))

        let stats = try venue.run(["diary", "stats", "--json"])
        #expect(stats.status == 0, "\(stats.output)")
        #expect(stats.stdout.contains("\"visits\": 1, \"open_visits\": 0"))
        #expect(stats.stdout.contains("\"oldest_check_in\": \"2025-11-22T10:00:00Z\""))

        // 2025-11-22T10:00Z + 3 days: the visit is inside a 14-day window, outside a 2-day one.
        let csv = try venue.run(["export", "--now", "2025-11-25T10:00:00Z"])
        #expect(csv.status == 0, "\(csv.output)")
        #expect(csv.stdout == """
            visit_id,kind,payload,check_in,check_out,duration_seconds,samples,rssi_max,rssi_mean,clock_uncorrected,shared_identifier\r
            1,herald,aa01,2025-11-22T10:00:00Z,2025-11-22T10:10:00Z,600,4,-58,-60.3,0,0\r

            """)
        let narrow = try venue.run(["export", "--now", "2025-11-25T10:00:00Z", "--days", "2"])
        #expect(narrow.stdout == DiaryExportHeader.csv)

        let json = try venue.run(["export", "--now", "1764064800", "--format", "json", "--output", venue.dir.path("e.json")])
        #expect(json.status == 0, "\(json.output)")
        let data = try #require(FileManager.default.contents(atPath: venue.dir.path("e.json")))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((object["venue"] as? [String: Any])?["code"] as? Int == 123123)
        #expect((object["visits"] as? [[String: Any]])?.first?["payload"] as? String == "aa01")
        #expect((object["window"] as? [String: Any])?["from"] as? String == "2025-11-11T10:00:00Z")
    }

    @Test func replayingTwiceDoesNotDuplicate() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        let file = try venue.dir.write("s.csv", Self.twoPhones)
        #expect(try venue.run(["diary", "replay", file]).status == 0)
        #expect(try venue.run(["diary", "replay", file]).status == 0)
        let count = try DatabaseQueue(path: venue.diary).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM visit") }
        #expect(count == 1)
    }

    @Test func malformedRowNamesTheLineAndWritesNothing() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        let good = try venue.dir.write("good.csv", Self.twoPhones)
        #expect(try venue.run(["diary", "replay", good]).status == 0)
        let before = try #require(FileManager.default.contents(atPath: venue.diary))

        let bad = try venue.dir.write("bad.csv", Self.twoPhones.replacingOccurrences(of: "1763805900,herald,aa01,-58", with: "1763805900,bluetooth,aa01,-58")
            + "\n1763809000,herald,cc03,-50\n")
        let r = try venue.run(["diary", "replay", bad])
        #expect(r.status == 65)
        #expect(r.stderr.contains("\(bad): line 6"))
        #expect(r.stderr.contains("nothing was written"))
        #expect(FileManager.default.contents(atPath: venue.diary) == before)
    }

    @Test func shareDaysZeroRefusesToExport() throws {
        let venue = try Venue(diaryKeys: "share_days = 0")
        defer { venue.dir.remove() }
        let file = try venue.dir.write("s.csv", Self.twoPhones)
        #expect(try venue.run(["diary", "replay", file]).status == 0)
        let r = try venue.run(["export"])
        #expect(r.status == 78)
        #expect(r.stderr.contains("share_days = 0"))
        #expect(r.stdout.isEmpty)
        // An explicit --days still works for an audit.
        #expect(try venue.run(["export", "--days", "all"]).stdout.contains("aa01"))
    }

    @Test func exportOfAMissingDiaryIsAClearError() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        let r = try venue.run(["export"])
        #expect(r.status == 66)
        #expect(r.stderr.contains("no venue diary at \(venue.diary)"))
        #expect(!FileManager.default.fileExists(atPath: venue.diary))
    }

    @Test func foreignFileIsRefusedUntouched() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        try Data("not a database at all".utf8).write(to: URL(fileURLWithPath: venue.diary))
        let file = try venue.dir.write("s.csv", Self.twoPhones)
        let r = try venue.run(["diary", "replay", file])
        #expect(r.status == 65)
        #expect(r.stderr.contains("is not a venue diary"))
        #expect(FileManager.default.contents(atPath: venue.diary) == Data("not a database at all".utf8))
    }

    /// A replay runs the node's retention on the replayed time: three days after the two phones,
    /// a phone's evening replayed with `recording_days = 2` deletes their visit. A file the clock
    /// says is from the future is refused whole (exit 65), naming its first such line.
    @Test func aFileFromTheFutureIsRefusedWhole() throws {
        let venue = try Venue(diaryKeys: "recording_days = 2")
        defer { venue.dir.remove() }
        #expect(try venue.run(["diary", "replay", try venue.dir.write("s.csv", Self.twoPhones)]).status == 0)
        let later = try venue.dir.write("later.csv", "time,kind,payload,rssi\n" + (0...10).map { "\(1_764_064_800 + $0 * 60),herald,cc03,-60" }.joined(separator: "\n"))
        let replay = try venue.run(["diary", "replay", later, "--now", "2025-11-23T00:00:00Z"])
        #expect(replay.status == 65, "\(replay.output)")
        #expect(replay.stderr.contains("line 2: time '1764064800' (2025-11-25T10:00:00Z) is later than now (2025-11-23T00:00:00Z)"), "\(replay.stderr)")
        let count = try DatabaseQueue(path: venue.diary).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM visit") }
        #expect(count == 1)
    }

    @Test(arguments: [("2025-11-25T12:00:00Z", 1)])
    func replayRetentionCountsFromTheReplayedTimeNoLaterThanNow(now: String, visits: Int) throws {
        let venue = try Venue(diaryKeys: "recording_days = 2")
        defer { venue.dir.remove() }
        #expect(try venue.run(["diary", "replay", try venue.dir.write("s.csv", Self.twoPhones)]).status == 0)
        // 2025-11-25T10:00Z, ten minutes.
        let later = try venue.dir.write("later.csv", "time,kind,payload,rssi\n" + (0...10).map { "\(1_764_064_800 + $0 * 60),herald,cc03,-60" }.joined(separator: "\n"))
        let replay = try venue.run(["diary", "replay", later, "--now", now])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.stdout.contains("visits: 1 checked in"))
        let count = try DatabaseQueue(path: venue.diary).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM visit") }
        #expect(count == visits)
    }

    @Test func purgeHonoursRecordingDaysAndNow() throws {
        let venue = try Venue(diaryKeys: "recording_days = 2")
        defer { venue.dir.remove() }
        let file = try venue.dir.write("s.csv", Self.twoPhones)
        #expect(try venue.run(["diary", "replay", file]).status == 0)
        let early = try venue.run(["diary", "purge", "--now", "2025-11-23T10:00:00Z"])
        #expect(early.stdout.contains("purged 0 visits"), "\(early.output)")
        let late = try venue.run(["diary", "purge", "--now", "2025-11-24T10:10:01Z"])
        #expect(late.stdout.contains("purged 1 visits"), "\(late.output)")
        let bad = try venue.run(["diary", "purge", "--now", "yesterday"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--now yesterday"))
    }

    /// `kill -9` in the middle of a replay: the file stays a sound SQLite database and every
    /// visit committed before the kill is exactly what a complete replay records.
    @Test func killDuringReplayLosesNothingCommitted() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        // Many phones, each seen 8 times 30 s apart (a 210 s visit), arriving 2 s apart.
        var text = "time,kind,payload,rssi\n"
        text.reserveCapacity(Self.phones * 8 * 34)
        let start = 1_763_805_600
        for phone in 0..<Self.phones {
            let payload = String(format: "%08x", phone)
            for k in 0..<8 { text += "\(start + phone * 2 + k * 30),herald,\(payload),-\(50 + k)\n" }
        }
        let file = try venue.dir.write("big.csv", text)

        let process = Process()
        process.executableURL = ProcessRunner.venueBeacon
        process.arguments = ["diary", "replay", file, "--config", venue.config]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait for the first committed batch, then pull the plug.
        var committed = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while committed == 0, process.isRunning, ContinuousClock.now < deadline {
            usleep(2_000)
            committed = (try? DatabaseQueue(path: venue.diary, configuration: Self.readOnly).read {
                try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM visit")
            } ?? 0) ?? 0
        }
        let killedMidway = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(killedMidway, "the replay finished before it could be killed; make the file larger")

        let killed = try DatabaseQueue(path: venue.diary)
        #expect(try killed.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
        let survivors = try killed.read { try Row.fetchAll($0, sql: "SELECT kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum FROM visit") }
        #expect(!survivors.isEmpty)
        #expect(survivors.count < Self.phones)

        // The reference: the same file replayed to the end into a second diary.
        let reference = try Venue()
        defer { reference.dir.remove() }
        #expect(try reference.run(["diary", "replay", file]).status == 0)
        let full = try DatabaseQueue(path: reference.diary).read { db in
            try Row.fetchAll(db, sql: "SELECT kind, payload, check_in, last_seen, check_out, samples, rssi_max, rssi_sum FROM visit")
        }
        #expect(full.count == Self.phones)
        var byKey: [String: Row] = [:]
        for row in full { byKey["\(row["kind"] as String):\((row["payload"] as Data).base64EncodedString()):\(row["check_in"] as Double)"] = row }
        var mismatches = 0
        for row in survivors {
            let key = "\(row["kind"] as String):\((row["payload"] as Data).base64EncodedString()):\(row["check_in"] as Double)"
            guard let done = byKey[key] else { mismatches += 1; continue }
            if (row["check_out"] as Double?) != nil {
                // A closed visit must be exactly what the complete replay recorded.
                if row != done { mismatches += 1 }
            } else if (row["last_seen"] as Double) > (done["check_out"] as Double) {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    static let phones = 20_000

    static var readOnly: Configuration {
        var c = Configuration()
        c.readonly = true
        return c
    }
}

enum DiaryExportHeader {
    static let csv = DiaryExport.csvHeader + "\r\n"
}
