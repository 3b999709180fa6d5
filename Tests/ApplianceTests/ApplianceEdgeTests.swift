import Foundation
import Logging
import Synchronization
import Testing
import VenueDiary
import VenueNode
@testable import Appliance

/// The hooks `venue-beacon run` calls, against a test notify socket and fake GPIO.
@Suite struct ApplianceEdgeTests {
    func settings(_ dir: TemporaryDirectory, gpio: Bool, export: String = "") throws -> Settings {
        try FileManager.default.createDirectory(atPath: dir.file("usb"), withIntermediateDirectories: true)
        return try Settings.parse(SettingsTests.minimal + """

            [diary]
            path = "\(dir.file("diary.sqlite"))"
            [export]
            outbox = "\(dir.file("outbox"))"
            directory = "\(dir.file("usb"))"
            require_mount = false
            signing_key = "\(dir.file("node-signing.key"))"
            \(export)
            [gpio]
            enabled = \(gpio)
            chip = "gpiochip0"
            status_led = "GPIO17"
            activity_led = "GPIO27"
            export_led = "GPIO22"
            button = "GPIO23"
            """, file: "t")
    }

    @Test func statusLEDStates() {
        #expect(ApplianceEdge.status(radio: .running, clockSynchronised: true, open: true) == .running)
        #expect(ApplianceEdge.status(radio: .running, clockSynchronised: false, open: true) == .waitingForClockSync)
        #expect(ApplianceEdge.status(radio: .partial(advertising: false, scanning: true), clockSynchronised: true, open: true) == .running)
        #expect(ApplianceEdge.status(radio: .starting, clockSynchronised: true, open: true) == .starting)
        #expect(ApplianceEdge.status(radio: .unavailable("gone"), clockSynchronised: true, open: true) == .bluetoothUnavailable)
        #expect(ApplianceEdge.status(radio: .running, clockSynchronised: true, open: false) == .closed)
    }

    @Test func notifyHooksSendReadyStatusRateLimitedWatchdogAndStopping() async throws {
        let dir = TemporaryDirectory("edge")
        let socket = try NotifySocket(dir.file("notify"))
        let edge = await ApplianceEdge.start(
            settings: try settings(dir, gpio: false), logger: Logger(label: "test"), gpio: FakeGPIO(),
            detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }),
            environment: ["NOTIFY_SOCKET": socket.name, "WATCHDOG_USEC": "30000000"])
        edge.hooks.ready()
        #expect(socket.receive() == "READY=1")
        edge.hooks.watchdog()
        edge.hooks.watchdog()  // within 15 s of the first: not sent
        edge.hooks.status("advertising and scanning")
        #expect(socket.receive() == "WATCHDOG=1")
        #expect(socket.receive() == "STATUS=advertising and scanning")
        edge.hooks.stopping()
        #expect(socket.receive() == "STOPPING=1")
    }

    @Test func clockSyncIsNoticed() async throws {
        let dir = TemporaryDirectory("edge")
        let answers = Mutex(["no", "no", "yes"])
        let detector = ClockSyncDetector(fileExists: { _ in false }, timedatectl: {
            answers.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        })
        let edge = await ApplianceEdge.start(
            settings: try settings(dir, gpio: false), logger: Logger(label: "test"), gpio: FakeGPIO(), detector: detector,
            environment: [:], tick: .milliseconds(20))
        // Asked once at start, before the diary opens: not yet.
        #expect(!edge.hooks.clockSynchronised())
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await edge.run() }
            #expect(await eventually { edge.hooks.clockSynchronised() })
            group.cancelAll()
        }
        #expect(answers.withLock { $0 } == ["yes"])
    }

    /// The start-up code is paged out when the radio first runs after READY and once more after
    /// it has run for the lifetime given; not while it is starting or unavailable (a node that
    /// never gets its radio keeps its code warm for the retries). The schedule itself:
    /// StartupCodeTests.
    @Test func startupCodeIsPagedOutWhenTheRadioRunsAndAfterItsLifetime() async throws {
        let dir = TemporaryDirectory("edge")
        let calls = Mutex(0)
        let edge = await ApplianceEdge.start(
            settings: try settings(dir, gpio: false), logger: Logger(label: "test"), gpio: FakeGPIO(),
            detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }), environment: [:],
            tick: .milliseconds(10), startupCodeLifetime: .milliseconds(100),
            pageOut: {
                calls.withLock { $0 += 1 }
                return StartupCode.Report(mappings: [], error: nil)
            })
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await edge.run() }
            try? await Task.sleep(for: .milliseconds(300))
            #expect(calls.withLock { $0 } == 0, "still starting")
            edge.hooks.radio(.unavailable("no adapter"))
            edge.hooks.ready()  // up, and retrying
            try? await Task.sleep(for: .milliseconds(300))
            #expect(calls.withLock { $0 } == 0, "radio unavailable")
            edge.hooks.radio(.running)
            #expect(await eventually { calls.withLock { $0 } == 2 }, "at once, then after 100 ms")
            try? await Task.sleep(for: .milliseconds(300))
            #expect(calls.withLock { $0 } == 2, "twice only")
            group.cancelAll()
        }
    }

    @Test func ledsButtonExportAndClockSync() async throws {
        let dir = TemporaryDirectory("edge")
        let gpio = FakeGPIO()
        let settings = try settings(dir, gpio: true)
        _ = try DiaryStore(path: settings.diary.path)  // an empty diary to export
        let edge = await ApplianceEdge.start(
            settings: settings, logger: Logger(label: "test"), gpio: gpio,
            detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }), environment: [:])
        #expect(edge.hooks.clockSynchronised())  // asked once at start

        await withTaskGroup(of: Void.self) { group in
            group.addTask { await edge.run() }
            #expect(await eventually { edge.hooks.clockSynchronised() })
            edge.hooks.radio(.running)
            #expect(await eventually { gpio.level("GPIO17") == true })  // steady: running and synced
            // Closing time, as the radio loop says: a short blip every 3 s; open again: steady.
            edge.hooks.open(false)
            #expect(await eventually { gpio.level("GPIO17") == false })
            try? await Task.sleep(for: .milliseconds(500))
            #expect(gpio.level("GPIO17") == false)
            edge.hooks.open(true)
            #expect(await eventually { gpio.level("GPIO17") == true })

            let visit = Visit(kind: .herald, payload: [0x30], checkIn: 0, lastSeen: 130, checkOut: nil, samples: 3, rssiMax: -50, rssiSum: -160)
            var tracker = PresenceTracker(settings: settings.diarySettings)
            let key = tracker.key(for: .herald, payload: [0x30])
            edge.hooks.visits([VisitChange(event: .checkedIn, key: key, visit: visit)])
            #expect(await eventually { gpio.state.withLock { s in s.changes.contains { $0.line == "GPIO27" && $0.on } } })

            // The button exports the (empty) diary's share window into the directory.
            gpio.push(pressed: true)
            // The export and its signature.
            #expect(await eventually { ((try? FileManager.default.contentsOfDirectory(atPath: dir.file("usb"))) ?? []).count == 2 })
            gpio.push(pressed: false)
            group.cancelAll()
        }
        edge.shutdown()
        #expect(await eventually { gpio.state.withLock { $0.closed } })
    }

    /// `[export] schedule` on a manual clock, with the real job and directory delivery: nothing
    /// before the clock is synchronised, nothing at the first start, the export at its time, not
    /// twice, and a time missed while the node was off once at the next start (a new edge reading
    /// the same state).
    @Test func scheduledExportRunsAtItsTimeOnceAndAfterAMissedTime() async throws {
        let dir = TemporaryDirectory("edge-schedule")
        let settings = try settings(dir, gpio: false, export: "schedule = \"daily 03:30\"")
        _ = try DiaryStore(path: settings.diary.path)
        func at(_ iso: String) -> Date { ISO8601DateFormatter().date(from: iso)! }
        func edge() -> ApplianceEdge {
            ApplianceEdge(
                settings: settings, logger: Logger(label: "test"), panel: nil,
                detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }), environment: [:], tick: .seconds(10),
                diaryFlusher: nil)
        }
        var service = edge()
        // An unsynchronised clock (a Pi without RTC starts at its last shutdown) decides nothing.
        #expect(await service.runScheduledExport(now: at("2026-11-20T03:30:00Z"), synchronised: false) == nil)
        #expect(!FileManager.default.fileExists(atPath: settings.export.scheduleState))
        #expect(await service.runScheduledExport(now: at("2026-11-24T12:00:00Z"), synchronised: true) == nil)  // first start: recorded only
        #expect(dir.names(in: "usb").isEmpty)
        #expect(await service.runScheduledExport(now: at("2026-11-25T03:29:50Z"), synchronised: true) == nil)
        #expect(await service.runScheduledExport(now: at("2026-11-25T03:30:00Z"), synchronised: false) == nil)
        #expect(await service.runScheduledExport(now: at("2026-11-25T03:30:00Z"), synchronised: true) == at("2026-11-25T03:30:00Z"))
        #expect(dir.names(in: "usb").count == 2)  // the export and its signature
        #expect(await service.runScheduledExport(now: at("2026-11-25T03:30:10Z"), synchronised: true) == nil)  // not twice
        #expect(await service.runScheduledExport(now: at("2026-11-25T18:00:00Z"), synchronised: true) == nil)

        // Off from the 25th evening to the 28th at noon: one export at the start, for the 28th.
        service = edge()
        #expect(await service.runScheduledExport(now: at("2026-11-28T12:00:00Z"), synchronised: true) == at("2026-11-28T03:30:00Z"))
        service = edge()
        #expect(await service.runScheduledExport(now: at("2026-11-28T12:00:10Z"), synchronised: true) == nil)
        let state = try String(contentsOfFile: settings.export.scheduleState, encoding: .utf8)
        #expect(state.contains("2026-11-28T03:30:00Z"))
    }

    /// A damaged diary: the service stays up showing a fault (fast blink), tells systemd why and
    /// feeds the watchdog, until a termination signal.
    @Test func aFaultThatRestartingCannotMendIsHeldOnTheStatusLEDUntilStopped() async throws {
        let dir = TemporaryDirectory("edge")
        let gpio = FakeGPIO()
        let socket = try NotifySocket(dir.file("notify"))
        let edge = await ApplianceEdge.start(
            settings: try settings(dir, gpio: true), logger: Logger(label: "test"), gpio: gpio,
            detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }),
            environment: ["NOTIFY_SOCKET": socket.name, "WATCHDOG_USEC": "2000000"])
        let (signals, continuation) = AsyncStream.makeStream(of: ServiceSignal.self)
        let held = Task { await edge.holdFault("the venue diary d.sqlite is damaged", signals: signals) }
        // Polled, not a blocking receive: the hold's own tasks need the cooperative pool.
        #expect(await socket.next() == "READY=1")
        #expect(await socket.next() == "STATUS=not recording: the venue diary d.sqlite is damaged")
        #expect(await socket.next() == "WATCHDOG=1")
        // Fast blink: the status line goes on and off within half a second, again and again.
        #expect(await eventually { gpio.state.withLock { s in s.changes.filter { $0.line == "GPIO17" }.count >= 6 } })
        #expect(await socket.next() == "WATCHDOG=1")  // fed while held (every second, at most every half interval)
        continuation.yield(.reload)
        try await Task.sleep(for: .milliseconds(50))
        continuation.yield(.terminate(SIGTERM))
        await held.value
        // The watchdog is fed every second until the hold ends: on a busy machine more than one
        // feed may come before STOPPING=1, never anything else.
        var afterHold = await socket.next()
        while afterHold == "WATCHDOG=1" { afterHold = await socket.next() }
        #expect(afterHold == "STOPPING=1")
        edge.shutdown()
    }
}

extension NotifySocket {
    /// The next datagram, polled without blocking a thread (``eventually``, which counts the
    /// limit in looks); nil when none came.
    func next(timeout: Duration = .seconds(30)) async -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let received = await eventually(within: timeout) {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard n >= 0 else { return false }
            buffer.removeSubrange(n...)
            return true
        }
        return received ? String(decoding: buffer, as: UTF8.self) : nil
    }
}
