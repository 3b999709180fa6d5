/// What the node has seen and done, for statistics and logs (never logged per advert).
public struct NodeCounters: Hashable, Sendable {
    public var adverts = 0
    /// Reports from devices the node does not follow.
    public var advertsIgnored = 0
    /// Of those, Apple devices Herald's filter marks as accessories.
    public var appleAccessories = 0
    public var targetsDetected = 0
    public var targetsForgotten = 0
    /// Targets forgotten early to make room for a new one (``NodeConfiguration/maximumTargets``).
    public var targetsEvicted = 0
    public var connectionsStarted = 0
    public var connectionFailures = 0
    /// Attempts the host refused for want of a free link (not failures).
    public var connectionsRefused = 0
    public var connectionTimeouts = 0
    public var payloadsRead = 0
    /// Apple devices whose services showed they do not run Herald.
    public var notHerald = 0
    /// Other venue beacons, not reported.
    public var venueBeacons = 0
    public var sharesWritten = 0
    public var signalWrites = 0
    /// Signal writes answered with an ATT error (bad lengths).
    public var signalWritesRejected = 0
    public var signalWritesUnknown = 0
    /// Payload-sharing writes whose payloads could not be split safely.
    public var sharesUnsplittable = 0
    /// Link reports for a session the node had already given up.
    public var staleLinkEvents = 0

    public init() {}
}
