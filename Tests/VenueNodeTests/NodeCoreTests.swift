import BLEHost
import Foundation
import Testing
@testable import VenueNode

/// The engine with the radio loop on top, as one host session: the loop's requests are carried
/// inside (their replies never leave), a request from outside is answered outside even when its
/// id equals one of the loop's, the loop ticks once a second as one of the session's deadlines
/// (also with no controller), and a sink gets the output after every call.
@Suite struct NodeCoreTests {
    /// Monday 2026-11-23 07:59:58 UTC; open from 08:00.
    static let wall = 1_795_420_798.0
    static let hours = Schedule(days: Array(repeating: [OpeningRange(start: 8 * 60, end: 16 * 60)], count: 7), timeZone: TimeZone(identifier: "UTC")!)

    static func core(sink: (@Sendable (inout NodeLoop.Output) -> Void)? = nil) throws -> (NodeCore, ContinuousClock.Instant) {
        let setup = NodeSetup()
        let gate = SignalWriteGate()
        let start = ContinuousClock.now
        let loop = NodeLoop(driver: try setup.driver(), schedule: hours, wall: wall, deviceName: "hci0", venueName: "The Swan")
        let core = NodeCore(
            engine: HostEngine(configuration: try setup.hostConfiguration(identity: try setup.identity(), gate: gate)), loop: loop,
            firstTick: start, steady: { start.duration(to: $0).seconds },
            tickInfo: { NodeLoop.Tick(wall: wall + $0) }, sink: sink)
        return (core, start)
    }

    @Test func theLoopsRequestsStayInsideAndAnOutsideOneIsAnsweredOutside() throws {
        var (core, start) = try Self.core()
        #expect(!core.loop.isOpen)
        #expect(core.nextDeadline == start, "the loop's first tick")
        // Ticks through 08:00: the loop switches the radio on with its first request (its id 1).
        var left: [HostAction] = []
        for second in 0...3 {
            left += core.tick(now: start + .seconds(second))
        }
        #expect(core.loop.isOpen)
        #expect(core.loop.requestsInFlight == 0, "the engine answered the loop inside")
        #expect(!left.contains { if case .reply = $0 { true } else { false } })
        let notices = core.output.notices
        core.clearOutput()
        #expect(notices.contains { if case .log(let line) = $0 { line.text.hasPrefix("opening hours: open until") } else { false } })
        #expect(notices.filter { $0 == .watchdog }.count == 4, "a tick a second, no controller needed")
        #expect(core.nextDeadline == start + .seconds(4))

        // A request from outside with the same id as the loop's first: its reply leaves the core.
        let outside = core.perform(.setRadio(advertising: true, scanning: true), id: HostRequestID(rawValue: 1), now: start + .seconds(4))
        let replies = outside.compactMap { action -> HostRequestID? in
            if case .reply(let id, .success) = action { return id }
            return nil
        }
        #expect(replies == [HostRequestID(rawValue: 1)])
    }

    @Test func theSinkGetsTheOutputAfterEveryCall() throws {
        let seen = SeenNotices()
        var (core, start) = try Self.core { output in
            seen.add(output.notices)
            output.removeAll()
        }
        _ = core.report(.opening("hci0"), now: start)
        _ = core.tick(now: start)
        #expect(core.output.isEmpty)
        #expect(seen.notices.contains(.radio(.starting)) == false, "starting is the driver's first condition: no change")
        #expect(seen.notices.contains(.watchdog))
        #expect(seen.notices.contains { if case .status = $0 { true } else { false } })
    }
}

final class SeenNotices: @unchecked Sendable {
    private let lock = NSLock()
    private var all: [NodeLoop.Notice] = []
    func add(_ notices: [NodeLoop.Notice]) { lock.withLock { all += notices } }
    var notices: [NodeLoop.Notice] { lock.withLock { all } }
}

extension Duration {
    fileprivate var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
