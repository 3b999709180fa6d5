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
        for file in ["simulated-diary.sqlite", "simulated-export.csv", "efficacy.json"] {
            #expect(FileManager.default.fileExists(atPath: dir.path("out/" + file)), "\(file)")
        }
        let export = try String(contentsOfFile: dir.path("out/simulated-export.csv"), encoding: .utf8)
        #expect(export.hasPrefix("visit_id,kind,payload"))
    }

    @Test func badOptionsAreRefused() throws {
        let r = try ProcessRunner.venueBeacon(["simulate", "--speed", "fast"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--speed fast"))
    }
}
