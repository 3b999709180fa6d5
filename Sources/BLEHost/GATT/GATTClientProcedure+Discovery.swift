/// The composite discovery: what a client that knows which services it looks for runs on a
/// peer, as one procedure (``GATTClientProcedure/discover(_:exchangingMTU:)``).
extension GATTClientProcedure {
    /// Discovery in one procedure, as a client that knows what it looks for does it: an MTU
    /// exchange first (when asked; a peer that refuses it talks at 23 bytes), then for each group
    /// of `services` the first alternative the peer has (Find By Type Value, as
    /// ``discoverPrimaryService(_:)``) and that service's characteristics. A group none of whose
    /// services the peer has is left out of the result, which is not a failure; an ATT error
    /// other than "not found", a malformed response, a timeout or the link closing fails it.
    /// What the Herald node does with a phone: `[[0xFCF6, legacy]]`, plus `[OpenTrace]` when it
    /// also reads OpenTrace.
    public static func discover(_ services: [[BluetoothUUID]], exchangingMTU: Bool = true) -> Self {
        let discovery = Discovery(groups: services.filter { !$0.isEmpty }, result: GATTDiscovery(mtu: ATTBearer.defaultMTU, services: []))
        let goal = Goal.discover(discovery)
        if exchangingMTU { return Self(.exchangeMTU(clientRxMTU: ATTBearer.maximumMTU), goal: goal) }
        return Self(.findServiceByValue(discovery.wanted ?? GATTUUID.primaryService), goal: goal)
    }

    /// The state of a composite discovery: the groups of alternative services still to look
    /// for, the service whose characteristics are being read, and what was found.
    struct Discovery: Hashable, Sendable {
        var groups: [[BluetoothUUID]]
        /// The group and the alternative within it being looked for.
        var group = 0
        var alternative = 0
        var service: GATTDiscoveredService?
        var result: GATTDiscovery

        /// The service to look for next, if any.
        var wanted: BluetoothUUID? {
            group < groups.count && alternative < groups[group].count ? groups[group][alternative] : nil
        }

        /// The wanted service is not on the peer: its next alternative, else the next group.
        mutating func notFound() {
            alternative += 1
            if alternative >= groups[group].count { nextGroup() }
        }

        mutating func nextGroup() {
            group += 1
            alternative = 0
            service = nil
        }
    }

    /// A composite discovery goes on with the next service it looks for, or finishes.
    mutating func nextService(_ discovery: Discovery, mtu: Int) -> Step {
        goal = .discover(discovery)
        guard let wanted = discovery.wanted else { return .finished(.success(.discovered(discovery.result))) }
        return enter(.findServiceByValue(wanted), mtu: mtu)
    }
}
