import Foundation
import Synchronization
import Testing
@testable import Appliance

/// GPIO chips cannot exist here: a fake backend with one chip, named lines, and a button whose
/// edges the test pushes.
final class FakeGPIO: GPIOBackend {
    struct State {
        var levels: [String: Bool] = [:]
        var changes: [(line: String, on: Bool)] = []
        var activeLow: [String: Bool] = [:]
        var edges: [Bool] = []
        var busy: Set<String> = []
        var closed = false
    }

    let chip = GPIOChipInfo(name: "gpiochip0", label: "pinctrl-bcm2711", lines: 58)
    let state = Mutex(State())
    let lineNames = ["GPIO17", "GPIO22", "GPIO23", "GPIO27"]

    func openChip(_ spec: String) throws(GPIOError) -> any GPIOChip {
        guard [chip.name, "/dev/" + chip.name, chip.label].contains(spec) else {
            throw .chipNotFound(spec, available: [chip])
        }
        return FakeChip(self)
    }

    func availableChips() -> [GPIOChipInfo] { [chip] }

    func push(pressed: Bool) { state.withLock { $0.edges.append(pressed) } }
    func level(_ line: String) -> Bool? { state.withLock { $0.levels[line] } }

    final class FakeChip: GPIOChip {
        let gpio: FakeGPIO
        init(_ gpio: FakeGPIO) { self.gpio = gpio }
        var info: GPIOChipInfo { gpio.chip }

        func name(_ line: GPIOLine) throws(GPIOError) -> String {
            switch line {
            case .name(let name) where gpio.lineNames.contains(name): return name
            case .offset(let offset) where offset < 58: return "GPIO\(offset)"
            default: throw .lineNotFound(line, chip: gpio.chip)
            }
        }

        func requestOutput(_ line: GPIOLine, consumer: String, activeLow: Bool) throws(GPIOError) -> any GPIOOutput {
            let name = try self.name(line)
            if gpio.state.withLock({ $0.busy.contains(name) }) { throw .lineBusy(line, chip: "gpiochip0", consumer: "other") }
            gpio.state.withLock { $0.activeLow[name] = activeLow }
            return FakeOutput(gpio: gpio, name: name)
        }

        func requestButton(_ line: GPIOLine, consumer: String) throws(GPIOError) -> any GPIOButtonInput {
            _ = try name(line)
            return FakeButton(gpio: gpio)
        }

        func close() { gpio.state.withLock { $0.closed = true } }
    }

    final class FakeOutput: GPIOOutput {
        let gpio: FakeGPIO
        let name: String
        init(gpio: FakeGPIO, name: String) {
            self.gpio = gpio
            self.name = name
        }
        func set(_ on: Bool) throws(GPIOError) {
            gpio.state.withLock {
                $0.levels[name] = on
                $0.changes.append((name, on))
            }
        }
    }

    final class FakeButton: GPIOButtonInput {
        let gpio: FakeGPIO
        var pressed = false
        init(gpio: FakeGPIO) { self.gpio = gpio }
        func isPressed() throws(GPIOError) -> Bool { pressed }
        func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool? {
            if let edge = gpio.state.withLock({ $0.edges.isEmpty ? nil : $0.edges.removeFirst() }) {
                pressed = edge
                return edge
            }
            Thread.sleep(forTimeInterval: Double(LEDPattern.nanoseconds(timeout)) / 1e9)
            return nil
        }
    }
}

@Suite struct GPIOPanelTests {
    static let wired = GPIOSettings(
        enabled: true, chip: "pinctrl-bcm2711", statusLED: .name("GPIO17"), activityLED: .name("GPIO27"), exportLED: .name("GPIO22"),
        button: .name("GPIO23"), activeLow: true)

    /// Waits (up to 5 s, never asserting on speed) for `condition`.

    @Test func ledsFollowTheStateAndStopTurnsThemOff() async throws {
        let gpio = FakeGPIO()
        let panel = try await GPIOPanel.start(settings: Self.wired, backend: gpio)
        #expect(gpio.state.withLock { $0.activeLow["GPIO17"] } == true)
        panel.setStatus(.running)
        #expect(await eventually { gpio.level("GPIO17") == true })
        panel.exportStarted()
        #expect(await eventually { gpio.level("GPIO22") == true })
        panel.checkIn()
        #expect(await eventually { gpio.state.withLock { s in s.changes.contains { $0.line == "GPIO27" && $0.on } } })
        #expect(await eventually { gpio.level("GPIO27") == false })  // a flash, not a steady light
        panel.stop()
        #expect(await eventually { gpio.state.withLock { $0.closed } })
        #expect(gpio.level("GPIO17") == false && gpio.level("GPIO22") == false)
    }

    @Test func aBouncyPressComesOutAsOnePress() async throws {
        let gpio = FakeGPIO()
        let panel = try await GPIOPanel.start(settings: Self.wired, backend: gpio)
        for edge in [true, false, true] { gpio.push(pressed: edge) }
        var iterator = panel.presses.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        gpio.push(pressed: false)
        try await Task.sleep(for: .milliseconds(150))
        panel.stop()
        #expect(await iterator.next() == nil)  // no second press; the stream ends at stop
    }

    @Test func openingProblemsAreClear() async {
        let gpio = FakeGPIO()
        var settings = Self.wired
        settings.chip = "gpiochip4"
        await #expect(throws: GPIOError.chipNotFound("gpiochip4", available: [gpio.chip])) {
            _ = try await GPIOPanel.start(settings: settings, backend: gpio)
        }
        settings = Self.wired
        settings.button = .name("GPIO99")
        await #expect(throws: GPIOError.lineNotFound(.name("GPIO99"), chip: gpio.chip)) {
            _ = try await GPIOPanel.start(settings: settings, backend: gpio)
        }
        #expect(gpio.state.withLock { $0.closed })  // the chip is released when a line fails
        gpio.state.withLock { $0.busy = ["GPIO27"] }
        await #expect(throws: GPIOError.lineBusy(.name("GPIO27"), chip: "gpiochip0", consumer: "other")) {
            _ = try await GPIOPanel.start(settings: Self.wired, backend: gpio)
        }
    }

    @Test func messagesNameTheChipsTheGroupAndTheFix() {
        let chips = [
            GPIOChipInfo(name: "gpiochip0", label: "pinctrl-rp1", lines: 54),
            GPIOChipInfo(name: "gpiochip10", label: nil, lines: 0, permissionDenied: true, group: "gpio"),
        ]
        #expect(GPIOError.chipNotFound("gpiochip4", available: chips).description
            == "GPIO chip \"gpiochip4\" not found; the chips here are: gpiochip0 [pinctrl-rp1] (54 lines), "
            + "gpiochip10 (permission denied; owned by group gpio) (set gpio.chip to a name, path or label)")
        let denied = GPIOError.permissionDenied(device: "/dev/gpiochip0", group: "gpio").description
        #expect(denied.hasPrefix("permission denied opening /dev/gpiochip0: the user running venue-beacon must be in group gpio"))
        #expect(denied.contains("SupplementaryGroups=gpio"))
    }

    /// The real libgpiod backend this build chose (1.x or 2.x, Package.swift) on a machine
    /// without GPIO: a clear "no chips" error.
    @Test func realBackendWithoutChipsSaysSo() {
        // The library loaded at run time is the major version the build compiled for.
        #expect(GPIOBackendSystem.libraryVersion.hasPrefix("\(GPIOBackendSystem.majorVersion)."))
        let chips = GPIOBackendSystem().availableChips()
        #expect(throws: GPIOError.self) { _ = try GPIOBackendSystem().openChip("gpiochip0") }
        do {
            _ = try GPIOBackendSystem().openChip("venue-beacon-no-such-chip")
        } catch {
            #expect(error == .chipNotFound("venue-beacon-no-such-chip", available: chips))
            if chips.isEmpty { #expect(error.description.contains("set gpio.enabled = false")) }
        }
    }
}
