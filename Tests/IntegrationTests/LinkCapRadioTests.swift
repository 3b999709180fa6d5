import BLEHost
import BLETransport
import Testing

extension RadioTests {
    /// The connection cap on the emulated air: at the cap the advertiser stays visible but takes
    /// no connection (btvirt answers LE Create Connection to an advertiser that is not
    /// connectable with 0x3E at once); once a link closes, a peer connects again.
    ///
    /// The advert has no scan response, so at the cap it becomes ADV_NONCONN_IND: btvirt lets a
    /// central connect to ADV_SCAN_IND, which the spec and real controllers do not (and it then
    /// reuses the live link's handle), so it cannot show the scannable variant.
    @Suite struct LinkCapRadioTests {
        /// A peripheral that takes one link at most, advertising without a scan response.
        static func cappedPeripheral() throws -> HostConfiguration {
            var advertising = try TestGATT.advertising()
            advertising.scanResponse = .empty
            return HostConfiguration(
                database: try TestGATT.database(), advertising: advertising, linkManager: LinkManager.Configuration(maximumConnections: 1))
        }

        /// The event type of the advert a scanner that starts now sees from `address`.
        static func freshReport(from address: BluetoothAddress, on btvirt: BTVirt) async throws -> LEAdvertisingEventType {
            try await btvirt.withHosts([try HostRadioTests.scanner()]) { late in
                try await late[0].report(from: address).eventType
            }
        }

        @Test func aPeerCannotConnectWhileTheNodeIsAtItsCapAndCanAfter() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.cappedPeripheral(), try HostRadioTests.central(), try HostRadioTests.central()]) {
                    hosts in
                    let (node, first, second) = (hosts[0], hosts[1], hosts[2])
                    try await node.advertising()
                    let link = try await first.host.connect(to: node.address, type: .public)
                    _ = try await node.waitFor("peripheral link") { e in
                        if case .connected(let l) = e, l.role == .peripheral { return l }
                        return nil
                    }
                    // At the cap: advertising is back on the air, without connections.
                    _ = try await node.waitFor("advertising again after the link") { _ -> Bool? in
                        let events = node.events
                        guard let at = events.firstIndex(where: { if case .connected = $0 { true } else { false } }) else { return nil }
                        return events[at...].contains { if case .radio(let state) = $0 { state.advertising } else { false } } ? true : nil
                    }
                    #expect(try await Self.freshReport(from: node.address, on: btvirt) == .nonConnectableUndirected)
                    do throws(HostError) {
                        let refused = try await second.host.connect(to: node.address, type: .public, timeout: .seconds(3))
                        Issue.record("a second peer connected at the cap: \(refused)")
                    } catch {
                        guard case .connectionFailed = error else {
                            Issue.record("unexpected error \(error)")
                            return
                        }
                    }
                    #expect(!node.events.contains { if case .connected(let l) = $0 { l.peerAddress == second.address } else { false } })

                    // The link closes: connectable again, and the second peer gets in.
                    try await first.host.disconnect(link)
                    _ = try await node.waitFor("disconnection") { e in
                        if case .disconnected = e { return true }
                        return nil
                    }
                    try await waitUntilConnectable(node.address, on: btvirt)
                    let secondLink = try await second.host.connect(to: node.address, type: .public)
                    #expect(secondLink.role == .central)
                    let accepted = try await node.waitFor("second peer's link") { e in
                        if case .connected(let l) = e, l.peerAddress == second.address { return l }
                        return nil
                    }
                    #expect(accepted.role == .peripheral)
                }
            }
        }

        /// Fresh scans until the advert is connectable again (the switch takes three commands).
        private func waitUntilConnectable(_ address: BluetoothAddress, on btvirt: BTVirt) async throws {
            for _ in 0..<20 {
                if try await Self.freshReport(from: address, on: btvirt) == .connectableUndirected { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("advertising did not become connectable again")
        }
    }
}
