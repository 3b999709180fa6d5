import Sightings
import VenueDiary

/// A visit as it really happened: one identity present at the venue from `arrive` to `leave`,
/// with no gap longer than the check-out limit in between. What the diary is judged against.
public struct TrueVisit: Sendable, Hashable {
    public var person: Int
    public var device: Int
    public var deviceKind: DeviceKind
    public var kind: PayloadKind
    /// The identity the diary should record: a Herald phone's payload, or one GAEN rolling
    /// proximity identifier (a GAEN phone's stay is as many identities as RPIs it went through).
    public var payload: [UInt8]
    /// Virtual seconds.
    public var arrive: Double
    public var leave: Double

    public init(
        person: Int, device: Int, deviceKind: DeviceKind, kind: PayloadKind, payload: [UInt8], arrive: Double,
        leave: Double
    ) {
        self.person = person
        self.device = device
        self.deviceKind = deviceKind
        self.kind = kind
        self.payload = payload
        self.arrive = arrive
        self.leave = leave
    }

    public var duration: Double { leave - arrive }
}

/// Someone at or near the venue.
public struct Person: Sendable, Equatable {
    public enum Role: String, Sendable, Equatable {
        /// Comes in (one visit, maybe a second one later).
        case visitor
        /// Passes by in range for under a minute.
        case walkPast
        /// Comes in with an iPhone that has no Herald app (nothing to record).
        case unrecordedVisitor
    }

    public var id: Int
    public var role: Role
    /// Devices carried, the phone first.
    public var devices: [Int]
    /// When the person is in range.
    public var presence: [PresenceSegment]
}

/// Everything a simulated venue is: its people, their devices and the true visits.
public struct GroundTruth: Sendable {
    public let configuration: VenueConfiguration
    public let people: [Person]
    public let devices: [SimulatedDevice]
    /// Visits of recorded phones, sorted by arrival.
    public let visits: [TrueVisit]

    public init(configuration: VenueConfiguration, people: [Person], devices: [SimulatedDevice]) {
        self.configuration = configuration
        self.people = people
        self.devices = devices
        visits = devices.flatMap { Self.visits(of: $0, checkOut: configuration.checkOutSeconds) }
            .sorted { ($0.arrive, $0.device) < ($1.arrive, $1.device) }
    }

    /// When the last device leaves, virtual seconds.
    public var lastDeparture: Double {
        devices.compactMap { $0.presence.last?.end }.max() ?? 0
    }

    /// The true visits of one device: presence segments joined across gaps of at most `checkOut`
    /// (the diary's rule); for a GAEN phone, per rolling proximity identifier.
    public static func visits(of device: SimulatedDevice, checkOut: Double) -> [TrueVisit] {
        guard let kind = device.kind.payloadKind, let person = device.owner else { return [] }
        var pieces: [(identity: [UInt8], start: Double, end: Double)] = []
        if let payload = device.payload {
            pieces = device.presence.map { (payload, $0.start, $0.end) }
        } else if kind == .gaen {
            let rotation = device.rotation
            for segment in device.presence {
                var epoch = rotation.epoch(at: segment.start)
                var start = segment.start
                while start < segment.end {
                    let end = min(segment.end, rotation.end(ofEpoch: epoch))
                    pieces.append((rotation.rollingProximityIdentifier(ofEpoch: epoch), start, end))
                    start = end
                    epoch += 1
                }
            }
        }
        // Join pieces of one identity across short gaps; pieces are in time order per identity.
        var open: [[UInt8]: Int] = [:]
        var visits: [TrueVisit] = []
        for piece in pieces {
            if let i = open[piece.identity], piece.start - visits[i].leave <= checkOut {
                visits[i].leave = piece.end
            } else {
                open[piece.identity] = visits.count
                visits.append(
                    TrueVisit(
                        person: person, device: device.id, deviceKind: device.kind, kind: kind, payload: piece.identity,
                        arrive: piece.start, leave: piece.end))
            }
        }
        return visits
    }
}
