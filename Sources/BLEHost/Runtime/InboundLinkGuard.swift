/// Bounds what a peer that connects to us (we are peripheral: a phone reading the venue or
/// writing to it) can take: its link is dropped after ``Configuration/idleTimeout`` without a
/// **useful** exchange, and its address is then refused for a while (backoff), so a few hostile
/// or stalled devices cannot hold every link under the connection cap.
///
/// Useful: a write to one of the application's characteristics that the application's
/// validator accepted, a read of an application characteristic's value, or a GATT procedure of
/// ours on the link that the peer answered. Connecting, MTU exchange, discovery, GAP reads,
/// refused writes and ATT commands for nothing keep no link alive.
///
/// Pure: the host engine tells it what happens and the time, and asks which links to drop
/// (``tick(now:)``) and whether a new link may stay (``admits(_:now:)``).
public struct InboundLinkGuard: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// A peer's link with no useful exchange for this long is dropped; nil: never.
        public var idleTimeout: Duration?
        /// An address dropped for idleness is refused this long, doubling with each further
        /// drop up to ``maximumBackoff``.
        public var backoff: Duration
        public var maximumBackoff: Duration
        /// Addresses with a backoff remembered at most (beyond, the one whose backoff ends
        /// first is forgotten); a peer that changes its address for each link is bounded by the
        /// idle limit alone.
        public var rememberedAddresses: Int

        public init(
            idleTimeout: Duration? = nil, backoff: Duration = .seconds(30), maximumBackoff: Duration = .seconds(300),
            rememberedAddresses: Int = 1024
        ) {
            self.idleTimeout = idleTimeout
            self.backoff = backoff
            self.maximumBackoff = max(backoff, maximumBackoff)
            self.rememberedAddresses = max(1, rememberedAddresses)
        }
    }

    public struct Counters: Hashable, Sendable {
        /// Links dropped for idleness.
        public var idleDrops = 0
        /// Links refused at once because their address was in backoff.
        public var refusals = 0
    }

    private struct Watched: Sendable {
        var address: BluetoothAddress
        var lastUseful: ContinuousClock.Instant
    }

    private struct Backoff: Sendable {
        var drops: Int
        var until: ContinuousClock.Instant
    }

    public let configuration: Configuration
    public private(set) var counters = Counters()
    private var watched: [UInt16: Watched] = [:]
    private var backoffs: [BluetoothAddress: Backoff] = [:]

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Whether a peer at `address` may keep the link it just opened; false while its address is
    /// in backoff (the caller refuses the link and says so with ``refused()``).
    public func admits(_ address: BluetoothAddress, now: ContinuousClock.Instant) -> Bool {
        guard let backoff = backoffs[address] else { return true }
        return now >= backoff.until
    }

    /// A link was refused because ``admits(_:now:)`` said no.
    public mutating func refused() {
        counters.refusals += 1
    }

    /// A peer's link opened (after ``admits(_:now:)``): its idle time starts now.
    public mutating func opened(_ handle: UInt16, address: BluetoothAddress, now: ContinuousClock.Instant) {
        guard configuration.idleTimeout != nil else { return }
        watched[handle] = Watched(address: address, lastUseful: now)
    }

    /// Something useful happened on `handle` (ignored for links not watched: ours as central).
    public mutating func useful(_ handle: UInt16, now: ContinuousClock.Instant) {
        watched[handle]?.lastUseful = now
    }

    public mutating func closed(_ handle: UInt16) {
        watched[handle] = nil
    }

    /// The controller session ended: no links any more (backoffs stay).
    public mutating func removeAllLinks() {
        watched = [:]
    }

    /// When ``tick(now:)`` must next run.
    public var nextDeadline: ContinuousClock.Instant? {
        guard let idle = configuration.idleTimeout else { return nil }
        var earliest: ContinuousClock.Instant?
        for index in watched.values.indices { earliest.lower(to: watched.values[index].lastUseful + idle) }
        return earliest
    }

    /// The links idle too long, to disconnect; their addresses go into backoff.
    public mutating func tick(now: ContinuousClock.Instant) -> [UInt16] {
        guard let idle = configuration.idleTimeout else { return [] }
        let idleHandles = watched.filter { now - $0.value.lastUseful >= idle }.keys.sorted()
        for handle in idleHandles {
            guard let link = watched.removeValue(forKey: handle) else { continue }
            counters.idleDrops += 1
            punish(link.address, now: now)
        }
        return idleHandles
    }

    /// The address is refused for the backoff, doubled per earlier drop still remembered.
    private mutating func punish(_ address: BluetoothAddress, now: ContinuousClock.Instant) {
        // A drop long after the last backoff ended starts again from the first step.
        var drops = 0
        if let last = backoffs[address], now < last.until + configuration.maximumBackoff { drops = last.drops }
        let delay = min(configuration.backoff * (1 << min(drops, 16)), configuration.maximumBackoff)
        backoffs[address] = Backoff(drops: drops + 1, until: now + delay)
        guard backoffs.count > configuration.rememberedAddresses else { return }
        backoffs = backoffs.filter { now < $0.value.until + configuration.maximumBackoff }
        while backoffs.count > configuration.rememberedAddresses,
            let first = backoffs.min(by: { $0.value.until < $1.value.until })?.key
        {
            backoffs[first] = nil
        }
    }
}
