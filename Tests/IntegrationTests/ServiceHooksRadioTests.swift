import Appliance
import BLEHost
import Foundation
import Logging
import Synchronization
import Testing
import VenueDiary

extension RadioTests {
    /// The service in this process on the emulator, with hooks that record their calls: what the
    /// appliance edge (systemd notify, LEDs, the export button) will see.
    @Suite struct ServiceHooksRadioTests {
        final class Calls: Sendable {
            private let log = Mutex<[String]>([])
            func add(_ call: String) { log.withLock { $0.append(call) } }
            var all: [String] { log.withLock { $0 } }
            func count(_ prefix: String) -> Int { all.filter { $0.hasPrefix(prefix) }.count }

            func wait(for prefix: String, count: Int = 1, timeout: Duration = .seconds(30)) async throws {
                let deadline = ContinuousClock.now + timeout
                while self.count(prefix) < count {
                    guard ContinuousClock.now < deadline else {
                        throw ChildProcess.Failure(description: "\(count)× \(prefix) not seen within \(timeout); calls: \(all.suffix(40))")
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
        }

        /// A value behind a lock, shared by reference. The clock test's values were local
        /// Mutexes, which Swift 6.0.3 (trixie's, which builds these tests for the Pi) refuses
        /// inside its task group ("copy of noncopyable typed value. This is a compiler bug").
        final class Shared<Value: Sendable>: @unchecked Sendable {
            private let lock = NSLock()
            private var value: Value
            init(_ value: Value) { self.value = value }
            func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
                lock.lock()
                defer { lock.unlock() }
                return try body(&value)
            }
        }

        @Test func hooksSeeReadinessWatchdogStatusCheckInsExportsAndStopping() async throws {
            try await BTVirt.run { btvirt in
                let directory = try TemporaryDirectory("venue-node-hooks")
                defer { directory.remove() }
                let settings = try Settings.parse(RunningNode.venue + """

                    [diary]
                    path = "\(directory.path("diary.sqlite"))"
                    check_in_seconds = 2
                    check_out_seconds = 4
                    [bluetooth]
                    device = "unix:/tmp/bt-server-le"
                    """, file: "hooks.toml")
                let calls = Calls()
                let hooks = ServiceHooks(
                    ready: { calls.add("ready") },
                    watchdog: { calls.add("watchdog") },
                    status: { calls.add("status " + $0) },
                    radio: { calls.add("radio \($0)") },
                    visits: { changes in
                        for change in changes { calls.add("visit \(change.event) \(Hex.encode(change.visit.payload).prefix(8))") }
                    },
                    export: {
                        calls.add("export started")
                        try? await Task.sleep(for: .seconds(1))
                        calls.add("export finished")
                    },
                    clockSynchronised: { true },
                    stopping: { calls.add("stopping") })
                let (signals, signal) = AsyncStream.makeStream(of: ServiceSignal.self)
                let service = NodeService(settings: settings, hooks: hooks, logger: Logger(label: "venue-beacon-test"))
                try await withThrowingTaskGroup(of: NodeService.Exit.self) { group in
                    group.addTask { try await service.run(signals: signals) }

                    try await calls.wait(for: "ready")
                    #expect(calls.all.contains("radio advertising and scanning"))
                    try await calls.wait(for: "watchdog", count: 2)
                    try await calls.wait(for: "status advertising and scanning; 0 phones present")

                    let phone = try btvirt.bumble("herald_phone.py", ["android", Hex.encode(testPayload(4)), "5"])
                    try await calls.wait(for: "visit checkedIn 00000004")
                    try await phone.waitForOutput("DONE", timeout: .seconds(20))
                    try await calls.wait(for: "visit checkedOut 00000004")

                    // SIGUSR1 twice: one export; the second arrives while it runs and is ignored.
                    signal.yield(.export)
                    try await calls.wait(for: "export started")
                    signal.yield(.export)
                    signal.yield(.reload)  // logged, nothing else
                    try await calls.wait(for: "export finished")
                    #expect(calls.count("export started") == 1)

                    signal.yield(.terminate(SIGTERM))
                    #expect(try await group.next() == .signal(SIGTERM))
                }
                #expect(calls.count("ready") == 1)
                #expect(calls.count("stopping") == 1)
                #expect(try DiaryStore(path: settings.diary.path, readOnly: true).visits().map(\.payload) == [testPayload(4)])
            }
        }

        /// The Pi booted with its clock restored two hours behind; a phone checks in; then the
        /// clock is synchronised (the wall clock steps two hours forward and the edge says so):
        /// the visit's times are corrected in the diary at once, and it goes on as one visit.
        @Test func aClockSyncWhileAPhoneIsPresentCorrectsItsVisitWithoutSplittingIt() async throws {
            try await BTVirt.run { btvirt in
                let directory = try TemporaryDirectory("venue-node-clock")
                defer { directory.remove() }
                let settings = try Settings.parse(RunningNode.venue + """

                    [diary]
                    path = "\(directory.path("diary.sqlite"))"
                    check_in_seconds = 2
                    check_out_seconds = 300
                    [bluetooth]
                    device = "unix:/tmp/bt-server-le"
                    """, file: "clock.toml")
                let system = NodeClock.system()
                let step = 7_200.0
                let shift = Shared(Date().timeIntervalSince1970 - step - system.monotonic())
                let synchronised = Shared(false)
                let clock = NodeClock(
                    monotonic: system.monotonic, wall: { shift.withLock { $0 } + system.monotonic() },
                    boot: { BootTime(seconds: 500 + system.monotonic(), bootID: "test-boot") })
                let checkIn = Shared<Double?>(nil)
                let calls = Calls()
                let hooks = ServiceHooks(
                    ready: { calls.add("ready") },
                    visits: { changes in
                        for change in changes {
                            if change.event == .checkedIn { checkIn.withLock { $0 = change.visit.checkIn } }
                            calls.add("visit \(change.event) \(Hex.encode(change.visit.payload).prefix(8))")
                        }
                    },
                    clockSynchronised: { synchronised.withLock { $0 } })
                let (signals, signal) = AsyncStream.makeStream(of: ServiceSignal.self)
                let service = NodeService(settings: settings, hooks: hooks, logger: Logger(label: "venue-beacon-test"), clock: clock)
                let reader = { try DiaryStore(path: settings.diary.path, readOnly: true) }
                try await withThrowingTaskGroup(of: NodeService.Exit.self) { group in
                    group.addTask { try await service.run(signals: signals) }
                    try await calls.wait(for: "ready")
                    let phone = try btvirt.bumble("herald_phone.py", ["android", Hex.encode(testPayload(6)), "20"])
                    try await calls.wait(for: "visit checkedIn 00000006")
                    let before = try #require(checkIn.withLock { $0 })

                    shift.withLock { $0 += step }
                    synchronised.withLock { $0 = true }
                    // The correction is one transaction at the next diary tick.
                    var corrected: Visit?
                    for _ in 0..<100 where corrected == nil {
                        try await Task.sleep(for: .milliseconds(100))
                        corrected = try? reader().visits().first { !$0.clockUncorrected }
                    }
                    let visit = try #require(corrected)
                    #expect(abs(visit.checkIn - (before + step)) < 0.01, "\(visit.checkIn - before) s moved")

                    try await phone.waitForOutput("DONE", timeout: .seconds(40))
                    signal.yield(.terminate(SIGTERM))
                    #expect(try await group.next() == .signal(SIGTERM))
                }
                #expect(calls.count("visit checkedIn") == 1)
                let visits = try reader().visits()
                #expect(visits.count == 1)
                let visit = try #require(visits.first)
                #expect(abs(visit.checkIn - (try #require(checkIn.withLock { $0 }) + step)) < 0.01)
                #expect(!visit.clockUncorrected && visit.lastSeen > visit.checkIn + 10)
                #expect(visit.lastSeen <= Date().timeIntervalSince1970 + 1)
            }
        }

        /// Opening hours on a wall clock the test moves: closed at start (ready all the same, no
        /// advertising), open (advertising and scanning, a phone checks in), closing time (radio
        /// off, the open visit closed at once at its last sighting, long before the check-out
        /// limit). A one-minute opening, and each move of the clock under a minute: the diary
        /// follows small steps at once and holds larger ones of a synchronised clock on the
        /// steady clock (DiaryKeeper.wallStepTolerance), as it would a bad time server's.
        @Test func openingHoursSwitchTheRadioAndCloseVisitsAtClosingTime() async throws {
            try await BTVirt.run { btvirt in
                let directory = try TemporaryDirectory("venue-node-hours")
                defer { directory.remove() }
                let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
                let settings = try Settings.parse(RunningNode.venue + """

                    [diary]
                    path = "\(directory.path("diary.sqlite"))"
                    check_in_seconds = 2
                    check_out_seconds = 300
                    [bluetooth]
                    device = "unix:/tmp/bt-server-le"
                    [schedule]
                    \(days.map { "\($0) = \"09:00-09:01\"" }.joined(separator: "\n"))
                    """, file: "hours.toml")
                // Wall time = a Monday in the system's time zone at `start`, moved by the test.
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = .current
                func monday(_ hour: Int, _ minute: Int, _ second: Int) throws -> Double {
                    let date = calendar.date(from: DateComponents(year: 2026, month: 11, day: 23, hour: hour, minute: minute, second: second))
                    return try #require(date).timeIntervalSince1970
                }
                let system = NodeClock.system()
                let shift = Mutex(try monday(8, 59, 15) - system.monotonic())
                let clock = NodeClock(monotonic: system.monotonic, wall: { shift.withLock { $0 } + system.monotonic() })
                func setWall(_ wall: Double) { shift.withLock { $0 = wall - system.monotonic() } }

                let calls = Calls()
                let hooks = ServiceHooks(
                    ready: { calls.add("ready") },
                    status: { calls.add("status " + $0) },
                    radio: { calls.add("radio \($0)") },
                    open: { calls.add("open \($0)") },
                    visits: { changes in
                        for change in changes { calls.add("visit \(change.event) \(Hex.encode(change.visit.payload).prefix(8))") }
                    })
                let (signals, signal) = AsyncStream.makeStream(of: ServiceSignal.self)
                let service = NodeService(settings: settings, hooks: hooks, logger: Logger(label: "venue-beacon-test"), clock: clock)
                try await withThrowingTaskGroup(of: NodeService.Exit.self) { group in
                    group.addTask { try await service.run(signals: signals) }
                    try await calls.wait(for: "ready")
                    try await calls.wait(for: "status closed (opening hours); ")
                    #expect(!calls.all.contains("radio advertising and scanning"))

                    setWall(try monday(9, 0, 0))
                    try await calls.wait(for: "radio advertising and scanning")
                    _ = try btvirt.bumble("herald_phone.py", ["android", Hex.encode(testPayload(5)), "90"])
                    try await calls.wait(for: "visit checkedIn 00000005")

                    // To 15 s before closing (a step under a minute: the check-in took seconds);
                    // closing time comes on its own.
                    setWall(try monday(9, 0, 45))
                    try await calls.wait(for: "visit checkedOut 00000005")
                    try await calls.wait(for: "radio not advertising, not scanning")
                    #expect(calls.count("ready") == 1)
                    // The status LED heard each change from the radio loop.
                    #expect(calls.all.filter { $0.hasPrefix("open ") } == ["open false", "open true", "open false"])

                    signal.yield(.terminate(SIGTERM))
                    #expect(try await group.next() == .signal(SIGTERM))
                }
                let visit = try #require(try DiaryStore(path: settings.diary.path, readOnly: true).visits().first)
                let checkOut = try #require(visit.checkOut)
                // Its last sighting: the radio goes off within a tick (a second) of closing time;
                // sightings recorded just after the test's clock jump carry the new time.
                let closing = try monday(9, 1, 0)
                #expect(checkOut < closing + 3, "\(checkOut - closing) s after closing")
                #expect(checkOut >= closing - 30)
            }
        }
    }
}
