import Herald

/// One device of the simulated venue: what it is, who carries it, when it is in range and how far
/// away, what it advertises and how often, and how its address rotates.
public struct SimulatedDevice: Sendable, Equatable, Identifiable {
    /// Index in ``GroundTruth/devices``.
    public let id: Int
    public let kind: DeviceKind
    /// The person carrying it; nil for devices fixed in the venue.
    public let owner: Int?
    /// A Herald phone's payload (Herald's 129-byte test payload); nil otherwise.
    public let payload: [UInt8]?
    /// What it advertises; nil for a phone that cannot advertise.
    public let advert: AdvertContent?
    /// Seconds between advertising events (the controller adds 0–10 ms of random delay to each).
    public let advertInterval: Double
    /// For a phone that writes to the node: seconds between its RSSI writes.
    public let signalWriteInterval: Double?
    public let rotation: AddressRotation
    /// RSSI at 1 m (dBm): the phone's transmit power, antenna and how it is carried.
    public let measuredPower: Double
    /// When it is in range, in time order, not overlapping.
    public let presence: [PresenceSegment]
    /// Seeds the device's own random streams (advert timing, radio noise).
    public let seed: UInt64

    public init(
        id: Int, kind: DeviceKind, owner: Int?, payload: [UInt8]?, advert: AdvertContent?, advertInterval: Double,
        signalWriteInterval: Double?, rotation: AddressRotation, measuredPower: Double, presence: [PresenceSegment],
        seed: UInt64
    ) {
        self.id = id
        self.kind = kind
        self.owner = owner
        self.payload = payload
        self.advert = advert
        self.advertInterval = advertInterval
        self.signalWriteInterval = signalWriteInterval
        self.rotation = rotation
        self.measuredPower = measuredPower
        self.presence = presence
        self.seed = seed
    }

    /// The presence segment at `time`, if the device is in range then.
    public func segment(at time: Double) -> PresenceSegment? {
        presence.first { $0.contains(time) }
    }

    /// Distance to the node at `time`; nil when out of range.
    public func distance(at time: Double) -> Double? {
        segment(at: time)?.path.distance(at: time)
    }

    /// The pseudo device address a Herald Android phone advertises.
    public var pseudoAddress: PseudoDeviceAddress? {
        if case .heraldAndroid(let pseudo) = advert { return pseudo }
        return nil
    }
}
