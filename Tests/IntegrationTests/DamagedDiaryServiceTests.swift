import Foundation
import Testing

/// `venue-beacon run` on a damaged diary: it refuses to write into it, says why, and stays up
/// showing the fault (no restart loop) until it is stopped.
@Suite struct DamagedDiaryServiceTests {
    @Test func theServiceRefusesADamagedDiaryAndHoldsTheFault() async throws {
        let venue = try DiaryCommandTests.Venue()
        defer { venue.dir.remove() }
        var text = "time,kind,payload,rssi\n"
        for phone in 0..<2000 {
            for step in 0..<3 { text += "\(1_763_805_600 + phone + step * 100),herald,\(String(format: "%08x", phone)),-60\n" }
        }
        #expect(try venue.run(["diary", "replay", try venue.dir.write("s.csv", text)]).status == 0)
        let handle = try #require(FileHandle(forUpdatingAtPath: venue.diary))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2 / 512 * 512)
        handle.write(Data((0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }))
        try handle.close()
        let damaged = try #require(FileManager.default.contents(atPath: venue.diary))

        let config = try venue.dir.write("run.toml", try String(contentsOfFile: venue.config, encoding: .utf8) + """

            [bluetooth]
            device = "unix:\(venue.dir.path("no-controller.sock"))"
            """)
        let socket = try NotifyListener(venue.dir.path("notify.sock"))
        let node = try ChildProcess(
            ProcessRunner.venueBeacon.path, ["run", "--config", config],
            environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "4000000"])
        try await node.waitForOutput("is damaged")
        try await socket.waitFor("READY=1")
        let status = try await socket.waitFor("STATUS=not recording: the venue diary \(venue.diary) is damaged", prefix: true)
        #expect(status.contains("diary salvage"))
        try await socket.waitFor("WATCHDOG=1")
        try await Task.sleep(for: .seconds(3))
        #expect(node.exitStatus == nil, "the service exited (a restart loop under systemd): \(node.output)")
        try await socket.waitFor("WATCHDOG=1")
        kill(node.processIdentifier, SIGTERM)
        #expect(try await node.waitForExit() == SIGTERM, "a stop ends the hold (nothing is open to close)")
        #expect(FileManager.default.contents(atPath: venue.diary) == damaged, "the service wrote into a damaged diary")
    }
}
