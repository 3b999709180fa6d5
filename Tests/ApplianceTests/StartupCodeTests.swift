import Foundation
import Herald
import Testing
@testable import Appliance

@Suite struct StartupCodeTests {
    @Test func findsTheExecutablesReadOnlyMappingsOnly() {
        let maps = """
            5581a0000000-5581a0400000 r--p 00000000 103:02 1311 /usr/bin/venue-beacon
            5581a0400000-5581a1300000 r-xp 00400000 103:02 1311 /usr/bin/venue-beacon
            5581a1300000-5581a1400000 r--p 01300000 103:02 1311 /usr/bin/venue-beacon
            5581a1400000-5581a1420000 rw-p 01400000 103:02 1311 /usr/bin/venue-beacon
            5581a1420000-5581a1500000 rw-p 00000000 00:00 0 
            5581a2000000-5581a2100000 rw-p 00000000 00:00 0                          [heap]
            7f0000000000-7f0000100000 r-xp 00000000 103:02 99 /usr/lib/x86_64-linux-gnu/libc.so.6
            7f0000200000-7f0000300000 r-xp 00000000 103:02 1312 /usr/bin/venue-beacon-old
            7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
            """
        let found = StartupCode.mappings(maps: maps, executable: "/usr/bin/venue-beacon")
        #expect(found.map(\.permissions) == ["r--p", "r-xp", "r--p"])
        #expect(found[1] == StartupCode.Mapping(start: 0x5581_a040_0000, end: 0x5581_a130_0000, permissions: "r-xp"))
        #expect(StartupCode.Report(mappings: found, error: nil).bytes == 0x140_0000)
        // A binary replaced by an upgrade while running: the kernel appends " (deleted)" to both
        // the maps line and /proc/self/exe, so the two still match.
        let replaced = "5581a0400000-5581a1300000 r-xp 00400000 103:02 1311 /usr/bin/venue beacon (deleted)"
        #expect(StartupCode.mappings(maps: replaced, executable: "/usr/bin/venue beacon (deleted)").count == 1)
        #expect(StartupCode.mappings(maps: "garbage\n-\n1-2 r-xp", executable: "/usr/bin/venue-beacon").isEmpty)
    }

    /// Resident bytes of this process's executable mappings that are not writable, from smaps.
    func residentExecutableBytes() throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
        var inExecutable = false
        var total = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), fields.count >= 5 {
                inExecutable = line.hasSuffix(executable) && !fields[1].contains("w")
            } else if inExecutable, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb * 1024
            }
        }
        return total
    }

    /// On this test process: the executable's resident pages go, and the process runs on
    /// (every page it needs comes back from the file).
    @Test func pagingOutDropsResidentCodeAndTheProcessRunsOn() throws {
        let before = try residentExecutableBytes()
        try #require(before > 1 << 20, "the test executable should have over 1 MB resident")
        let report = try #require(StartupCode.pageOut())
        #expect(report.error == nil)
        #expect(report.mappings.contains { $0.permissions.contains("x") })
        let after = try residentExecutableBytes()
        #expect(after < before / 2, "resident \(before) -> \(after) bytes")
        // Code paged out runs again: parse a maps line (code from this module and the stdlib).
        #expect(StartupCode.mappings(maps: "1000-2000 r-xp 0 0:0 1 /x", executable: "/x").count == 1)
    }

    /// When: at once when the radio first runs after READY, again after it has run for the
    /// lifetime, then never; the lifetime counts only time the radio ran without a break; nothing
    /// while it is starting or unavailable, nor ever without a lifetime.
    @Test func pagedOutWhenStartUpEndsAndOnceMoreAfterTheLifetime() {
        enum Step { case radio(RadioCondition, at: Int), ready, tick(at: Int) }
        let t0 = ContinuousClock.now
        func answers(_ schedule: inout StartupCodeSchedule, _ steps: [Step]) -> [Bool] {
            steps.map { step in
                switch step {
                case .radio(let condition, let at): return schedule.radio(condition, now: t0 + .seconds(at))
                case .ready: return schedule.readySent()
                case .tick(let at): return schedule.tick(now: t0 + .seconds(at))
                }
            }
        }
        var schedule = StartupCodeSchedule(lifetime: .seconds(60))
        let steps: [(Step, Bool)] = [
            (.radio(.starting, at: 0), false),
            (.radio(.unavailable("no adapter"), at: 1), false),
            (.ready, false),  // up without a controller: nothing ran yet
            (.tick(at: 100), false),
            (.radio(.running, at: 100), true),  // start-up is over
            (.radio(.partial(advertising: false, scanning: true), at: 101), false),  // still running
            (.tick(at: 150), false),
            // A break restarts the lifetime, and a restart is not a second start-up.
            (.radio(.unavailable("reset"), at: 150), false),
            (.radio(.running, at: 155), false),
            (.tick(at: 200), false),
            (.tick(at: 215), true),  // ran 60 s
            (.tick(at: 400), false),
            (.radio(.unavailable("reset"), at: 401), false),
            (.radio(.running, at: 402), false),
            (.tick(at: 1000), false),
        ]
        #expect(answers(&schedule, steps.map(\.0)) == steps.map(\.1))
        #expect(schedule.pageOuts == 2)

        // The usual order: the radio runs, then READY; the lifetime counts from the radio.
        var usual = StartupCodeSchedule(lifetime: .seconds(60))
        #expect(answers(&usual, [.radio(.running, at: 0), .ready, .tick(at: 59), .tick(at: 60)]) == [false, true, false, true])

        var never = StartupCodeSchedule(lifetime: nil)
        #expect(answers(&never, [.radio(.running, at: 0), .ready, .tick(at: 1000)]) == [false, false, false])
    }
}
