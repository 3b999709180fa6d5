extension LinkManager {
    /// The links the controller holds and the connection cap, as the link half of Zephyr's
    /// `conn.c`: open links (reported to the owner) and links beyond the cap being refused
    /// (never reported, but held by the controller until their Disconnection Complete, so they
    /// count against the cap). Attempts are the ``Initiator``'s; callers pass their count.
    struct LinkTable: Sendable {
        /// At most this many links at once, counting our own attempt.
        let maximum: Int
        private(set) var links: [UInt16: LELink] = [:]
        /// Peripheral links beyond the cap, being disconnected.
        private(set) var refused: [UInt16: LELink] = [:]

        init(maximum: Int) {
            self.maximum = maximum
        }

        /// Links the controller holds: open and being refused.
        var occupied: Int { links.count + refused.count }

        /// Links left under the cap.
        var free: Int { maximum - occupied }

        /// Whether `attempts` more would leave no link free.
        func isFull(adding attempts: Int) -> Bool {
            occupied + attempts >= maximum
        }

        func hasLink(to address: BluetoothAddress) -> Bool {
            links.values.contains(where: { $0.peerAddress == address })
        }

        mutating func add(_ link: LELink) {
            links[link.handle] = link
        }

        /// Removes an open link; nil if there is none with this handle.
        mutating func remove(_ handle: UInt16) -> LELink? {
            links.removeValue(forKey: handle)
        }

        /// Holds a link being refused until its Disconnection Complete.
        mutating func refuse(_ link: LELink) {
            refused[link.handle] = link
        }

        /// Forgets a refused link; false if there is none with this handle.
        mutating func removeRefused(_ handle: UInt16) -> Bool {
            refused.removeValue(forKey: handle) != nil
        }

        /// New connection parameters for an open link; the updated link, nil if unknown.
        mutating func update(_ handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) -> LELink? {
            guard var link = links[handle] else { return nil }
            link.interval = interval
            link.latency = latency
            link.supervisionTimeout = supervisionTimeout
            links[handle] = link
            return link
        }

        /// Forgets every link (the controller was reset); returns the open ones by handle.
        mutating func removeAll() -> [LELink] {
            let open = links.keys.sorted().compactMap { links[$0] }
            links.removeAll()
            refused.removeAll()
            return open
        }
    }
}
