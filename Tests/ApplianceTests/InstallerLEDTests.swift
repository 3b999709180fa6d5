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
    /// radio runs, and the status file on the card says so beside the status line.
    @Test func aRefusedImportShowsOnTheLEDAndInTheStatusFile() async throws {
        let dir = TemporaryDirectory("edge")
        let card = TemporaryDirectory("card")
        FileManager.default.createFile(atPath: card.file("venue-beacon.toml"), contents: Data("[venue]\n".utf8))
        FileManager.default.createFile(atPath: card.file("venue-beacon-error.txt"), contents: Data("problems\n".utf8))
        let gpio = FakeGPIO()
        let edge = await ApplianceEdge.start(
            settings: try ApplianceEdgeTests().settings(dir, gpio: true), logger: Logger(label: "test"), gpio: gpio,
            detector: ClockSyncDetector(fileExists: { _ in true }, timedatectl: { nil }), environment: [:], tick: .milliseconds(10),
            installer: Doctor(configPath: dir.file("none.toml"), bootDirectory: card.path, inService: true))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await edge.run() }
            edge.hooks.radio(.running)
            edge.hooks.status("advertising and scanning; 2 phones present")
            // Running and synchronised would be steady on: the code flashes instead.
            #expect(await eventually { gpio.level("GPIO17") == true })
            #expect(await eventually { gpio.level("GPIO17") == false })
            #expect(await eventually { FileManager.default.fileExists(atPath: card.file("venue-beacon-status.txt")) })
            let text = (try? String(contentsOfFile: card.file("venue-beacon-status.txt"), encoding: .utf8)) ?? ""
            #expect(text.contains("node: advertising and scanning; 2 phones present"))
            #expect(text.contains("status LED: 2 flashes, pause (the config on the card was refused)"))
            #expect(text.contains("✗ boot partition:"))
            group.cancelAll()
        }
        edge.shutdown()
    }
}
