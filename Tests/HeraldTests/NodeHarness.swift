import BLEHost
import Sightings
import Testing

@testable import Herald

/// Drives a ``SensorNode`` through a scripted timeline and keeps what it asked for.
struct NodeHarness {
    var node: SensorNode
    var actions = [NodeAction]()

    init(_ configure: (inout NodeConfiguration) -> Void = { _ in }) {
        var configuration = NodeConfiguration()
        configure(&configuration)
        node = SensorNode(configuration: configuration)
    }

    static func address(_ n: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: 0x4000_0000_0000 | n) }

    /// Takes the actions produced since the last call.
    mutating func take() -> [NodeAction] {
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }

    mutating func advert(_ n: UInt64, _ advertClass: AdvertClass, rssi: Int? = -60, connectable: Bool? = true, at now: Double) -> [NodeAction] {
        node.advert(
            AdvertSighting(address: Self.address(n), addressType: .random, connectable: connectable, rssi: rssi, advertClass: advertClass),
            now: now, into: &actions)
        return take()
    }

    mutating func tick(_ now: Double) -> [NodeAction] {
        node.tick(now: now, into: &actions)
        return take()
    }

    mutating func link(_ event: LinkEvent, _ id: TargetID, at now: Double) -> [NodeAction] {
        node.link(event, target: id, now: now, into: &actions)
        return take()
    }

    mutating func write(_ write: SignalWrite, from n: UInt64, at now: Double) -> [NodeAction] {
        node.signalWrite(write, from: Self.address(n), addressType: .random, now: now, into: &actions)
        return take()
    }

    /// Runs a whole read: connect (from a tick), connected, discovered, payload read, disconnected.
    mutating func read(_ id: TargetID, services: DiscoveredServices, payload: [UInt8], at now: Double) -> [NodeAction] {
        var all = [NodeAction]()
        all += link(.connected, id, at: now)
        all += link(.discovered(services), id, at: now)
        all += link(.payloadRead(payload), id, at: now)
        all += link(.disconnected, id, at: now)
        return all
    }
}

extension [NodeAction] {
    var events: [SensorEvent] { compactMap { if case .event(let e) = $0 { return e } else { return nil } } }
    var connects: [TargetID] { compactMap { if case .connect(let t) = $0 { return t.id } else { return nil } } }
    var disconnects: [TargetID] { compactMap { if case .disconnect(let t) = $0 { return t.id } else { return nil } } }
    var reads: [(SensorPayload, [RSSISample])] {
        events.compactMap { if case .read(_, let p, let earlier, _) = $0 { return (p, earlier) } else { return nil } }
    }
    var measures: [(TargetID, Int?, SensorPayload?)] {
        events.compactMap { if case .measure(let t, let rssi, let p, _, _) = $0 { return (t.id, rssi, p) } else { return nil } }
    }
    var detects: [Target] { events.compactMap { if case .detect(let t, _) = $0 { return t } else { return nil } } }
}

/// Fixtures shared by the sensor node's suites.
let pseudoA = PseudoDeviceAddress(int64: 0x0102_0304_0506_0708)
let androidAdvert = AdvertClass.herald(pseudoAddress: pseudoA, apple: false)
let phone1 = TestPayload.make(identifier: 1), phone2 = TestPayload.make(identifier: 2), phone3 = TestPayload.make(identifier: 3)
