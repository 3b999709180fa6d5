import Foundation
import Testing

/// `venue-beacon config check` end to end: the real binary, real files.
@Suite struct ConfigCommandTests {
    @Test func shippedConfigChecksAndPrintsEffectiveSettings() throws {
        let example = ProcessRunner.repositoryRoot.appendingPathComponent("config/venue-beacon.toml").path
        let r = try ProcessRunner.venueBeacon(["config", "check", "--config", example])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("name = \"Erin's Stakehouse\""))
        #expect(r.stdout.contains("check_in_seconds = 120"))
        #expect(r.stdout.contains("recording_days = 31"))
    }

    @Test func environmentVariableNamesTheFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("v.toml", "[venue]\ncountry = 1\nstate = 2\ncode = 3\nname = \"Env Cafe\"\n")
        let r = try ProcessRunner.venueBeacon(["config", "check"], environment: ["VENUE_BEACON_CONFIG": path])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.stdout.contains("name = \"Env Cafe\""))
    }

    @Test func badConfigExits78NamingEveryProblemAndWritesNothing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let diary = dir.path("diary.sqlite")
        let path = try dir.write("bad.toml", """
            [venue]
            country = 826
            state = 4
            code = 123123
            name = "x"
            [diary]
            path = "\(diary)"
            check_in_seconds = -1
            colour = "blue"
            """)
        let r = try ProcessRunner.venueBeacon(["config", "check", "--config", path])
        #expect(r.status == 78)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("\(path): diary.check_in_seconds = -1: must be a whole number of seconds from 1 to 86400"))
        #expect(r.stderr.contains("\(path): diary.colour = \"blue\": unknown key"))
        #expect(!FileManager.default.fileExists(atPath: diary))
    }
}
