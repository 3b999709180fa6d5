import BLEHost
import BLETransport
import Foundation
import Simulation
import Synchronization

/// The node's controller on the simulated air, reached like any other controller: an
/// ``HCITransport``, so the host runs unchanged on top of it. Only `run-bench` (Benchmarks/)
/// uses it, serving the air to the real `venue-beacon run` on a unix socket; it is a target of
/// its own so that `Simulation` does not depend on `BLETransport`.
///
/// Virtual time moves only inside ``receive(timeout:)``: the air runs forward to the next packet
/// for the host or to the end of the timeout, in virtual seconds, then (when paced) the call waits
/// until wall time has caught up with the speed-up. The host therefore sees exactly the timing a
/// controller at that speed would give it, and at `max` speed an hour passes as fast as the CPU
/// computes it. The host must take its own time from ``now`` / ``instant`` (not the system clock)
/// for its timeouts to be virtual too.
public final class SimulatedTransport: HCITransport {
    public let name = "simulated-air"
    /// Virtual time at which the air stops: `receive` no longer advances past it.
    public let endTime: Double
    public let pacing: Pacing
    private let state: Mutex<State>

    private struct State: Sendable {
        var air: Air
        var closed = false
        var woken = false
        var pacer: Pacer?
    }

    public init(air: Air, endTime: Double, pacing: Pacing = .unpaced) {
        self.endTime = endTime
        self.pacing = pacing
        state = Mutex(State(air: air))
    }

    /// Virtual seconds since the venue opened.
    public var now: Double { state.withLock { $0.air.now } }

    /// The current virtual time as an instant, for code that keeps `ContinuousClock` instants.
    public var instant: ContinuousClock.Instant { state.withLock { $0.air.instant($0.air.now) } }

    /// Whether virtual time reached ``endTime``.
    public var isFinished: Bool { state.withLock { $0.air.now >= endTime } }

    /// Reads the air (counters, truth) under the transport's lock.
    public func inspect<R: Sendable>(_ body: (borrowing Air) -> R) -> R {
        state.withLock { body($0.air) }
    }

    public func send(_ packet: H4Packet) throws(HCITransportError) {
        try state.withLock { (s: inout State) throws(HCITransportError) in
            guard !s.closed else { throw HCITransportError.closed }
            s.air.send(packet)
        }
    }

    public func receive(timeout: Duration?) throws(HCITransportError) -> [H4Packet] {
        let endTime = self.endTime
        let pacing = self.pacing
        let (packets, reached, pacer) = try state.withLock {
            (s: inout State) throws(HCITransportError) -> ([H4Packet], Double, Pacer?) in
            guard !s.closed else { throw HCITransportError.closed }
            if s.pacer == nil { s.pacer = Pacer(pacing: pacing, startVirtual: s.air.now, startWall: .now) }
            if s.woken {
                s.woken = false
                return ([], s.air.now, s.pacer)
            }
            let limit = min(endTime, timeout.map { s.air.now + Self.seconds($0) } ?? endTime)
            let packets = s.air.advance(until: limit)
            return (packets, s.air.now, s.pacer)
        }
        if let pacer {
            let delay = pacer.delay(untilVirtual: reached, wallNow: .now)
            if delay > .zero { Thread.sleep(forTimeInterval: Self.seconds(delay)) }
        }
        if packets.isEmpty, reached >= endTime {
            // Nothing more will happen: do not let a waiting host spin.
            Thread.sleep(forTimeInterval: min(0.01, timeout.map(Self.seconds) ?? 0.01))
        }
        return packets
    }

    public func wakeUp() {
        state.withLock { $0.woken = true }
    }

    public func close() {
        state.withLock { $0.closed = true }
    }

    static func seconds(_ duration: Duration) -> Double {
        let c = duration.components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
