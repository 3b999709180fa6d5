import Foundation
import Herald
import Logging
import Testing
@testable import Appliance

/// The status LED's codes for an installer's mistakes: counted flashes.
@Suite struct InstallerLEDTests {
    func ms(_ n: Int) -> Duration { .milliseconds(n) }

    func trace(_ pattern: LEDPattern, from: Int, to: Int, step: Int) -> String {
        stride(from: from, to: to, by: step).map { pattern.level(ms($0)) ? "1" : "0" }.joined()
    }

    @Test func twoFlashesForAConfigErrorThreeForBluetooth() {
        let zeros = String(repeating: "0", count: 15)
        #expect(trace(NodeStatus.configError.pattern, from: 0, to: 2200, step: 100) == "11000" + "11" + zeros)
        #expect(trace(NodeStatus.bluetoothBlocked.pattern, from: 0, to: 2700, step: 100) == "11000" + "11000" + "11" + zeros)
        // It repeats.
        #expect(trace(NodeStatus.configError.pattern, from: 2200, to: 4400, step: 100) == "11000" + "11" + zeros)
    }

    @Test func flashesSayWhenTheyNextChange() {
        let two = LEDTimings.flashes(2)
        #expect(two.nextChange(after: ms(0)) == ms(200))
        #expect(two.nextChange(after: ms(200)) == ms(500))
        #expect(two.nextChange(after: ms(650)) == ms(700))
        #expect(two.nextChange(after: ms(700)) == ms(2200))
        #expect(two.nextChange(after: ms(2300)) == ms(2400))
        // Every change it announces is a real change of level.
        var t = ms(0)
        for _ in 0..<20 {
            guard let next = two.nextChange(after: t) else { break }
            #expect(two.level(next) != two.level(next - ms(1)))
            t = next
        }
    }

    @Test func everyStatusPatternIsDistinctFromTheOthers() {
        let shown: [NodeStatus] = [.running, .starting, .bluetoothUnavailable, .closed, .configError, .bluetoothBlocked]
        #expect(Set(shown.map { "\($0.pattern)" }).count == shown.count)
    }

    @Test func bluetoothBlockedAndConfigErrorWinOverTheRest() {
        let unavailable = RadioCondition.unavailable("no adapter")
        #expect(ApplianceEdge.status(radio: unavailable, clockSynchronised: true, open: true, bluetoothBlocked: true) == .bluetoothBlocked)
        #expect(ApplianceEdge.status(radio: unavailable, clockSynchronised: true, open: true) == .bluetoothUnavailable)
        #expect(ApplianceEdge.status(radio: .running, clockSynchronised: true, open: false, configError: true) == .configError)
        // Blocked is only what an unavailable radio shows: a radio that runs is running.
        #expect(ApplianceEdge.status(radio: .running, clockSynchronised: true, open: true, bluetoothBlocked: true) == .running)
        #expect(ApplianceEdge.status(radio: unavailable, clockSynchronised: true, open: true, configError: true, bluetoothBlocked: true) == .bluetoothBlocked)
    }

    /// The service started after a refused import: the status LED flashes its code although the
    /// radio runs.
    @Test func aRefusedImportShowsOnTheLED() async throws {
        let dir = TemporaryDirectory("edge")
        let card = TemporaryDirectory("card")
        FileManager.default.createFile(atPath: card.file("venue-beacon.toml"), contents: Data("[venue]\n".utf8))
        FileManager.default.createFile(atPath: card.file("venue-beacon-error.txt"), contents: Data("problems\n".utf8))
        let gpio = FakeGPIO()
        let edge = await ApplianceEdge.start(
            settings: try ApplianceEdgeTests().settings(dir, gpio: true), logger: Logger(label: "test"), gpio: gpio,
            detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }), environment: [:], tick: .milliseconds(10),
            bootDirectory: card.path)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await edge.run() }
            edge.hooks.radio(.running)
            // Running and synchronised would be steady on: the code flashes instead.
            #expect(await eventually { gpio.level("GPIO17") == true })
            #expect(await eventually { gpio.level("GPIO17") == false })
            group.cancelAll()
        }
        edge.shutdown()
    }

    // MARK: no valid config at all (a fresh install) and the card's refused

    static let noVenue = """
        # The package's config: the venue left for the installer.
        # country = 826
        [gpio]
        enabled = true
        chip = "gpiochip0"
        status_led = "GPIO17"
        """

    @Test func whenRunHoldsTheConfigErrorCode() {
        let gpio = ConfigErrorHold.gpio(cardRefused: true, configText: Self.noVenue, file: "c.toml")
        #expect(gpio?.statusLED == .name("GPIO17"))
        #expect(gpio?.chip == "gpiochip0")
        // Nothing refused on the card: exit 78 as for any refused config.
        #expect(ConfigErrorHold.gpio(cardRefused: false, configText: Self.noVenue, file: "c.toml") == nil)
        // No status LED to show it on: GPIO off (the package's default), no status LED, or
        // [gpio] itself wrong, or no TOML at all.
        #expect(ConfigErrorHold.gpio(cardRefused: true, configText: "[venue]\n", file: "c.toml") == nil)
        #expect(ConfigErrorHold.gpio(cardRefused: true, configText: "[gpio]\nenabled = true\n", file: "c.toml") == nil)
        #expect(ConfigErrorHold.gpio(cardRefused: true, configText: Self.noVenue + "\nactive_low = 3\n", file: "c.toml") == nil)
        #expect(ConfigErrorHold.gpio(cardRefused: true, configText: "[gpio\n", file: "c.toml") == nil)
        #expect(ConfigErrorHold.gpio(cardRefused: true, configText: nil, file: "c.toml") == nil)
        // Other sections' mistakes do not matter.
        #expect(ConfigErrorHold.gpio(cardRefused: true, configText: "[diary]\ncheck_in_seconds = -1\n" + Self.noVenue, file: "c.toml") != nil)
    }

    @Test func theHoldFlashesTheCodeUntilStopped() async throws {
        let dir = TemporaryDirectory("hold")
        let path = dir.file("c.toml")
        try Self.noVenue.write(toFile: path, atomically: true, encoding: .utf8)
        let gpio = FakeGPIO()
        let settings = try #require(ConfigErrorHold.gpio(cardRefused: true, configPath: path))
        let (signals, stop) = AsyncStream.makeStream(of: ServiceSignal.self)
        let held = await withTaskGroup(of: Bool?.self) { group -> Bool? in
            group.addTask {
                await ConfigErrorHold.hold(
                    gpio: settings, status: ConfigErrorHold.statusLine(bootDirectory: "/boot/firmware"), logger: Logger(label: "test"),
                    backend: gpio, environment: [:], signals: signals)
            }
            group.addTask {
                let on = await eventually { gpio.level("GPIO17") == true }
                let off = await eventually { gpio.level("GPIO17") == false }
                let again = await eventually { gpio.level("GPIO17") == true }
                #expect(on && off && again)
                stop.yield(.reload)
                stop.yield(.terminate(SIGTERM))
                return nil
            }
            var result: Bool?
            for await value in group where value != nil { result = value }
            return result
        }
        #expect(held == true)
        #expect(await eventually { gpio.state.withLock { $0.closed } })
    }

    @Test func noChipNoHold() async {
        var settings = GPIOSettings.lenient(Self.noVenue, file: "c.toml")
        settings?.chip = "gpiochip9"
        guard let settings else {
            Issue.record("the section did not parse")
            return
        }
        let (signals, _) = AsyncStream.makeStream(of: ServiceSignal.self)
        let held = await ConfigErrorHold.hold(gpio: settings, status: "x", logger: Logger(label: "test"), backend: FakeGPIO(), environment: [:], signals: signals)
        #expect(!held)
    }

    @Test func theStatusLineNamesTheCardsFiles() {
        let line = ConfigErrorHold.statusLine(bootDirectory: "/boot/firmware")
        #expect(line.contains("/boot/firmware/venue-beacon.toml was refused"))
        #expect(line.contains("venue-beacon-error.txt"))
    }
}
