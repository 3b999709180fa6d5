import Herald
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
}
