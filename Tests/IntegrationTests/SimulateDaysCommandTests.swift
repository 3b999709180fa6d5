import Foundation
import Testing

/// `venue-beacon simulate --days N` end to end: the real binary runs a venue day with the config's
/// opening hours and retention, and reports it day by day.
@Suite struct SimulateDaysCommandTests {
    /// With --faults: a day has one, the controller lost and reopened.
    @Test func aDayWithTheConfigsOpeningHoursIsReportedAsADay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let week = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
            .map { "\($0) = \"09:00-10:00\"" }.joined(separator: "\n")
        let config = try dir.write("venue-beacon.toml", """
            [venue]
            country = 826
            state = 4
            code = 77
            name = "The Crown"
            [diary]
            path = "\(dir.path("real-diary.sqlite"))"
            recording_days = 3
            [schedule]
            \(week)
            """)
        let r = try ProcessRunner.venueBeacon([
            "simulate", "--days", "1", "--visitors", "8", "--seed", "2", "--data-dir", dir.path("out"), "--json", "--config", config,
            "--faults",
        ])
        #expect(r.status == 0, "\(r.output)")
        let last = try #require(r.stdout.split(separator: "\n").last)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        let days = try #require(report["days"] as? [[String: Any]])
        #expect(days.count == 1)
        let day = try #require(days.first)
        #expect(day["date"] as? String == "2026-06-01")
        #expect(try #require(day["recall"] as? Double) >= 0.995)
        #expect(day["split_visits"] as? Int == 0)
        #expect(day["phantom_visits"] as? Int == 0)
        #expect(try #require(day["eligible_visits"] as? Int) > 0)
        #expect(try #require(day["diary_bytes"] as? Int) > 0)
        let faults = try #require(day["faults"] as? [[String: Any]])
        #expect(faults.count == 1)
        #expect(faults.first?["kind"] as? String == "controller_lost")
        let over = faults.first?["over"] as? Double
        #expect(over != nil)
        #expect(r.stdout.contains("fault: day 1 09:"))
        let venue = try #require(report["venue"] as? [String: Any])
        #expect(venue["faults"] as? Bool == true)
        #expect(venue["recording_days"] as? Int == 3)
        #expect(venue["opening_hours"] as? [String] == Array(repeating: "09:00-10:00", count: 7))
        #expect(r.stderr.contains("day 1 of 1 (2026-06-01)"))
        #expect(FileManager.default.fileExists(atPath: dir.path("out/efficacy.json")))
        #expect(!FileManager.default.fileExists(atPath: dir.path("real-diary.sqlite")))
    }

    @Test func daysOutOfRangeAreRefused() throws {
        for days in ["0", "401"] {
            let r = try ProcessRunner.venueBeacon(["simulate", "--days", days])
            #expect(r.status == 64)
            #expect(r.stderr.contains("--days \(days): expected 1 to 400"))
        }
        let logs = try ProcessRunner.venueBeacon(["simulate", "--days", "2", "--herald-logs", "/nonexistent"])
        #expect(logs.status == 64)
        #expect(logs.stderr.contains("--herald-logs"))
        let faults = try ProcessRunner.venueBeacon(["simulate", "--faults"])
        #expect(faults.status == 64)
        #expect(faults.stderr.contains("--faults needs --days"))
    }
}
