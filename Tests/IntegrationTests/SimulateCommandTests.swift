import Foundation
import Testing

/// `venue-beacon simulate` end to end: the real binary runs a small venue and meets the
/// efficacy goals (recall ≥ 99.5 %, no split visits, check-in error median ≤ 10 s, p95 ≤ 60 s).
@Suite struct SimulateCommandTests {
    @Test func aSmallVenueMeetsTheEfficacyGoalsAndLeavesItsFiles() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let r = try ProcessRunner.venueBeacon([
            "simulate", "--visitors", "20", "--hours", "1", "--seed", "3", "--data-dir", dir.path("out"), "--json",
        ])
        #expect(r.status == 0, "\(r.output)")
        let last = try #require(r.stdout.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(try #require(report["recall"] as? Double) >= 0.995)
        #expect(report["split_visits"] as? Int == 0)
        #expect(report["phantom_visits"] as? Int == 0)
        let checkIn = try #require(report["check_in_error_seconds"] as? [String: Any])
        #expect(try #require(checkIn["median"] as? Double) <= 10)
        #expect(try #require(checkIn["p95"] as? Double) <= 60)
        #expect(try #require(report["eligible_visits"] as? Int) >= 10)
        #expect(r.stdout.contains("recall"))
        #expect(r.stderr.contains("checked in today"))
        // Progress (venue time, share done, visitors so far) is on standard error only: with --json
        // standard output is the report, its JSON last.
        #expect(r.stderr.contains("visitors arrived 20 of 20"), "\(r.stderr)")
        #expect(r.stderr.contains("(100 %)"), "\(r.stderr)")
        #expect(!r.stdout.contains("visitors arrived") && !r.stdout.contains("checked in today"))
        for file in ["simulated-diary.sqlite", "simulated-export.csv", "efficacy.json"] {
            #expect(FileManager.default.fileExists(atPath: dir.path("out/" + file)), "\(file)")
        }
        let export = try String(contentsOfFile: dir.path("out/simulated-export.csv"), encoding: .utf8)
        #expect(export.hasPrefix("visit_id,kind,payload"))
    }

    /// With --config the node and the truth follow the file (here a 60 s check-in limit and 4
    /// links), and the venue's own diary is never touched.
    @Test func aConfigFileSetsUpTheSimulatedNode() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let config = try dir.write("venue-beacon.toml", """
            [venue]
            country = 826
            state = 4
            code = 77
            name = "The Crown"
            [diary]
            path = "\(dir.path("real-diary.sqlite"))"
            check_in_seconds = 60
            [bluetooth]
            max_connections = 4
            """)
        let r = try ProcessRunner.venueBeacon([
            "simulate", "--visitors", "10", "--hours", "0.5", "--seed", "5", "--data-dir", dir.path("out"), "--json", "--config", config,
        ])
        #expect(r.status == 0, "\(r.output)")
        let last = try #require(r.stdout.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(report["check_in_limit_seconds"] as? Int == 60)
        #expect(try #require(report["recall"] as? Double) >= 0.995)
        #expect(!FileManager.default.fileExists(atPath: dir.path("real-diary.sqlite")))
        #expect(FileManager.default.fileExists(atPath: dir.path("out/simulated-diary.sqlite")))

        // A mistake in the file is the config's error (exit 78, the key named), as for every command.
        let bad = try dir.write("bad.toml", "[venue]\ncountry = 826\nstate = 4\ncode = 1\nname = \"X\"\n[bluetooth]\nmax_connections = 0\n")
        let refused = try ProcessRunner.venueBeacon(["simulate", "--data-dir", dir.path("out2"), "--config", bad])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("max_connections"))
    }

    @Test func badOptionsAreRefused() throws {
        let r = try ProcessRunner.venueBeacon(["simulate", "--speed", "fast"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--speed fast"))
    }

    /// --visitors and --hours outside their ranges are refused before anything runs (exit 64),
    /// the option and its range named: 100000 visitors, the old maximum, ran past 15 minutes.
    @Test(arguments: [
        (["--visitors", "100000"], "--visitors 100000: expected 1 to 5000"),
        (["--visitors", "5001"], "--visitors 5001: expected 1 to 5000"),
        (["--visitors", "0"], "--visitors 0: expected 1 to 5000"),
        (["--hours", "0"], "--hours 0.0: expected more than 0 and at most 24"),
        (["--hours", "25"], "--hours 25.0: expected more than 0 and at most 24"),
    ])
    func outOfRangeSizesAreRefused(options: [String], message: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let r = try ProcessRunner.venueBeacon(["simulate", "--data-dir", dir.path("out")] + options)
        #expect(r.status == 64, "\(r.output)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("out")))
    }
}
