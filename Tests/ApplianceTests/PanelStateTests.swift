import Testing
@testable import Appliance

/// LED patterns and button gestures on a manual clock (milliseconds since an origin).
@Suite struct PanelStateTests {
    func ms(_ n: Int) -> Duration { .milliseconds(n) }

    /// The levels of one LED sampled every `step` ms over `[from, to)`, as a string of 1 and 0.
    func trace(_ state: PanelState, _ led: KeyPath<PanelLevels, Bool>, from: Int, to: Int, step: Int) -> String {
        stride(from: from, to: to, by: step).map { state.levels(at: ms($0))[keyPath: led] ? "1" : "0" }.joined()
    }

    @Test func patternsBlinkFromTheirStart() {
        let slow = LEDTimings.slowBlink
        #expect(slow.level(ms(0)) && slow.level(ms(499)) && !slow.level(ms(500)) && slow.level(ms(1000)))
        #expect(slow.nextChange(after: ms(0)) == ms(500))
        #expect(slow.nextChange(after: ms(500)) == ms(1000))
        #expect(slow.nextChange(after: ms(1250)) == ms(1500))
        #expect(LEDPattern.on.nextChange(after: ms(3)) == nil)
        #expect(!LEDPattern.off.level(ms(3)))
    }

    @Test func statusLEDTellsTheStates() {
        var s = PanelState()
        #expect(trace(s, \.status, from: 0, to: 2000, step: 250) == "11001100")  // starting: slow blink
        s.setStatus(.running, at: ms(2100))
        #expect(trace(s, \.status, from: 2100, to: 5000, step: 100).allSatisfy { $0 == "1" })  // steady
        #expect(s.nextChange(after: ms(2100)) == nil)
        s.setStatus(.bluetoothUnavailable, at: ms(5000))
        #expect(trace(s, \.status, from: 5000, to: 5400, step: 50) == "11001100")  // fast blink
        s.setStatus(.closed, at: ms(6000))
        #expect(trace(s, \.status, from: 6000, to: 12_000, step: 100) == "1" + String(repeating: "0", count: 29) + "1" + String(repeating: "0", count: 29))
        s.setStatus(.waitingForClockSync, at: ms(20_000))
        #expect(trace(s, \.status, from: 20_000, to: 22_000, step: 250) == "11001100")
        // Setting the same status again does not restart its pattern.
        s.setStatus(.waitingForClockSync, at: ms(20_600))
        #expect(!s.levels(at: ms(20_600)).status)
    }

    @Test func everyStatusHasADistinctPattern() {
        let patterns = [NodeStatus.running, .starting, .bluetoothUnavailable, .closed].map(\.pattern)
        #expect(Set(patterns.map { "\($0)" }).count == 4)
        #expect(NodeStatus.waitingForClockSync.pattern == NodeStatus.starting.pattern)
        #expect(NodeStatus.fault.pattern == NodeStatus.bluetoothUnavailable.pattern)
    }

    @Test func activityFlashesOncePerCheckInAndQueuesBursts() {
        var s = PanelState()
        s.setStatus(.running, at: .zero)
        s.checkIn(at: ms(1000))
        #expect(trace(s, \.activity, from: 990, to: 1100, step: 10) == "0" + String(repeating: "1", count: 8) + "00")
        // Three check-ins at once: three flashes 200 ms apart.
        s.checkIn(at: ms(5000))
        s.checkIn(at: ms(5000))
        s.checkIn(at: ms(5000))
        #expect(trace(s, \.activity, from: 5000, to: 5600, step: 40) == "110001100011000")
        #expect(s.nextChange(after: ms(5000)) == ms(5080))
        #expect(s.nextChange(after: ms(5080)) == ms(5200))
        #expect(s.nextChange(after: ms(5500)) == nil)
        // A burst shows at most five.
        for _ in 0..<20 { s.checkIn(at: ms(10_000)) }
        #expect(trace(s, \.activity, from: 10_000, to: 12_000, step: 40).split(separator: "0").count == 5)
    }

    @Test func exportLEDBlinksThenHoldsOnSuccess() {
        var s = PanelState()
        s.setStatus(.running, at: .zero)
        s.exportStarted(at: ms(1000))
        #expect(trace(s, \.export, from: 1000, to: 2000, step: 125) == "11001100")
        s.exportFinished(success: true, at: ms(2300))
        #expect(s.levels(at: ms(2300)).export && s.levels(at: ms(7299)).export)
        #expect(!s.levels(at: ms(7300)).export)
        #expect(s.nextChange(after: ms(2300)) == ms(7300))
        #expect(s.nextChange(after: ms(7300)) == nil)
    }

    @Test func exportLEDFastBlinksForTenSecondsAfterAFailure() {
        var s = PanelState()
        s.setStatus(.running, at: .zero)
        s.exportStarted(at: ms(0))
        s.exportFinished(success: false, at: ms(1000))
        #expect(trace(s, \.export, from: 1000, to: 1400, step: 50) == "11001100")
        #expect(s.levels(at: ms(10_950)).export == false)
        #expect(trace(s, \.export, from: 11_000, to: 20_000, step: 50).allSatisfy { $0 == "0" })
        #expect(s.nextChange(after: ms(10_950)) == ms(11_000))
        #expect(s.nextChange(after: ms(11_000)) == nil)
    }

    // MARK: button

    /// Feeds (time, pressed) edges and returns the times at which presses completed, polling
    /// every 10 ms in between as a driver would.
    func presses(_ edges: [(Int, Bool)], until end: Int) -> [Int] {
        var debouncer = ButtonDebouncer()
        var found: [Int] = []
        var pending = edges[...]
        for t in stride(from: 0, through: end, by: 1) {
            var complete = false
            while let edge = pending.first, edge.0 == t {
                complete = debouncer.sample(pressed: edge.1, at: ms(t)) || complete
                pending = pending.dropFirst()
            }
            if t % 10 == 0 || debouncer.deadline == ms(t) { complete = debouncer.poll(at: ms(t)) || complete }
            if complete { found.append(t) }
        }
        return found
    }

    @Test func cleanPressCountsOnceAfterFiftyMilliseconds() {
        #expect(presses([(100, true), (400, false)], until: 1000) == [150])
    }

    @Test func bouncyContactIsOnePress() {
        let bounces = [(100, true), (102, false), (104, true), (107, false), (109, true), (600, false), (601, true), (603, false)]
        #expect(presses(bounces, until: 2000) == [159])
    }

    @Test func glitchShorterThanTheSettleTimeIsNoPress() {
        #expect(presses([(100, true), (130, false)], until: 1000).isEmpty)
    }

    @Test func holdingIsOnePressAndTwoPressesNeedARelease() {
        #expect(presses([(0, true), (5000, false)], until: 6000) == [50])
        #expect(presses([(0, true), (200, false), (300, true), (400, false)], until: 1000) == [50, 350])
        // A release shorter than 50 ms does not re-arm: still one press.
        #expect(presses([(0, true), (200, false), (220, true), (400, false)], until: 1000) == [50])
    }
}
