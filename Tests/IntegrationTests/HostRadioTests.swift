import BLEHost
import BLETransport
import Testing

extension RadioTests {
    /// Our host on both ends of the emulated air.
    @Suite struct HostRadioTests {
        static func peripheral() throws -> HostConfiguration {
            HostConfiguration(database: try TestGATT.database(), advertising: try TestGATT.advertising())
        }

        static func scanner() throws -> HostConfiguration {
            HostConfiguration(database: try TestGATT.database(name: "scanner"), scanning: LESetScanParameters())
        }

        static func central() throws -> HostConfiguration {
            HostConfiguration(database: try TestGATT.database(name: "central"))
        }

        @Test func advertiserSeenByScannerWithExactBytes() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.peripheral(), try Self.scanner()]) { hosts in
                    let (advertiser, scanner) = (hosts[0], hosts[1])
                    let report = try await scanner.report(from: advertiser.address)
                    #expect(Array(report.data) == TestGATT.advertisingData)
                    #expect(report.eventType == .connectableUndirected)
                    #expect(report.addressType == .public)
                    #expect(report.rssi == nil)  // btvirt reports 127: unavailable
                    #expect(Array(report.advertisingData.serviceUUIDs) == [TestGATT.service])
                }
            }
        }

        @Test func gattReadOfLongValueAndWritesBothWays() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.peripheral(), try Self.central()]) { hosts in
                    let (server, client) = (hosts[0], hosts[1])
                    try await server.advertising()
                    let link = try await client.host.connect(to: server.address, type: .public)
                    #expect(link.role == .central)
                    // ATT_MTU 23: the 400-byte value needs Read + 18 Read Blobs.
                    let value = try await client.host.gatt(.readCharacteristic(TestGATT.long, inService: TestGATT.service), on: link)
                    #expect(value == .value(TestGATT.longValue))

                    let found = try await client.host.gatt(.discoverPrimaryService(TestGATT.service), on: link)
                    guard case .services(let services) = found, let service = services.first else {
                        Issue.record("service not found: \(found)")
                        return
                    }
                    let listed = try await client.host.gatt(
                        .discoverCharacteristics(from: service.startHandle, through: service.endHandle), on: link)
                    guard case .characteristics(let characteristics) = listed,
                        let writable = characteristics.first(where: { $0.uuid == TestGATT.writable })
                    else {
                        Issue.record("characteristic not found: \(listed)")
                        return
                    }
                    #expect(try await client.host.gatt(.write([1, 2, 3], to: writable.valueHandle), on: link) == .written)
                    try await client.host.writeWithoutResponse([4, 5], to: writable.valueHandle, on: link)
                    // A long write (prepared writes) after an MTU exchange.
                    #expect(try await client.host.gatt(.exchangeMTU(), on: link) == .mtu(517))
                    let long = [UInt8](repeating: 0xA5, count: 300)
                    #expect(try await client.host.gatt(.write(long, to: writable.valueHandle), on: link) == .written)

                    let writes = try await server.waitFor("three writes") { _ in
                        let w = server.events.compactMap { e -> GATTWrite? in if case .gattWrite(let w) = e { w } else { nil } }
                        return w.count >= 3 ? w : nil
                    }
                    #expect(writes.map(\.value) == [[1, 2, 3], [4, 5], long])
                    #expect(writes.map(\.withResponse) == [true, false, true])
                    #expect(writes.allSatisfy { $0.characteristic.uuid == TestGATT.writable })

                    try await client.host.disconnect(link)
                    _ = try await server.waitFor("disconnection") { e in
                        if case .disconnected(let l, _) = e, l.peerAddress == client.address { return l }
                        return nil
                    }
                }
            }
        }

        @Test func subscribedClientIsNotifiedOfNewValues() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.peripheral(), try Self.central()]) { hosts in
                    let (server, client) = (hosts[0], hosts[1])
                    try await server.advertising()
                    let link = try await client.host.connect(to: server.address, type: .public)
                    guard case .services(let services) = try await client.host.gatt(.discoverPrimaryService(TestGATT.service), on: link),
                        let service = services.first,
                        case .characteristics(let found) = try await client.host.gatt(
                            .discoverCharacteristics(from: service.startHandle, through: service.endHandle), on: link),
                        let notifying = found.first(where: { $0.uuid == TestGATT.notifying })
                    else {
                        Issue.record("notifying characteristic not found")
                        return
                    }
                    let subscribed = try await client.host.gatt(
                        .subscribe(valueHandle: notifying.valueHandle, endHandle: service.endHandle), on: link)
                    #expect(subscribed == .written)
                    _ = try await server.waitFor("subscription") { e in
                        if case .subscriptionChanged(let s) = e, s.characteristic.uuid == TestGATT.notifying { return s }
                        return nil
                    }
                    try await server.host.setValue([7, 8, 9], forCharacteristic: notifying.valueHandle)
                    let value = try await client.waitFor("notification") { e in
                        if case .notification(link.handle, notifying.valueHandle, let value) = e { return value }
                        return nil
                    }
                    #expect(value == [7, 8, 9])
                    // The new value is also what a read returns.
                    #expect(try await client.host.gatt(.read(notifying.valueHandle), on: link) == .value([7, 8, 9]))
                }
            }
        }

        /// Advertising stops when a peer connects; the link manager enables it again (under the
        /// connection cap) and after the link closes. btvirt reports an advert when a scan is
        /// enabled, so a scanner that starts later proves the advertiser is on the air.
        @Test func advertisingResumesDuringAndAfterAConnection() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.peripheral(), try Self.central()]) { hosts in
                    let (advertiser, central) = (hosts[0], hosts[1])
                    try await advertiser.advertising()
                    let link = try await central.host.connect(to: advertiser.address, type: .public)
                    _ = try await advertiser.waitFor("peripheral link") { e in
                        if case .connected(let l) = e, l.role == .peripheral { return l }
                        return nil
                    }
                    try await btvirt.withHosts([try Self.scanner()]) { late in
                        _ = try await late[0].report(from: advertiser.address)
                    }
                    try await central.host.disconnect(link)
                    _ = try await advertiser.waitFor("disconnection") { e in
                        if case .disconnected = e { return true }
                        return nil
                    }
                    try await btvirt.withHosts([try Self.scanner()]) { late in
                        _ = try await late[0].report(from: advertiser.address)
                    }
                }
            }
        }

        /// btvirt has one ACL buffer of 192 bytes: many long reads and writes in a row must
        /// all complete, each waiting for its buffer credit.
        /// `setRadio` switches advertising off and on while the host runs.
        @Test func advertisingStopsAndResumes() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.peripheral(), try Self.scanner()]) { hosts in
                    let (advertiser, scanner) = (hosts[0], hosts[1])
                    _ = try await scanner.report(from: advertiser.address)
                    let seen = { @Sendable in
                        scanner.events.contains { if case .advertisingReport(let r) = $0 { r.address == advertiser.address } else { false } }
                    }
                    let rescan = { @Sendable in
                        scanner.clearEvents()
                        try await scanner.host.setRadio(advertising: true, scanning: false)
                        try await scanner.host.setRadio(advertising: true, scanning: true)
                    }
                    // A fresh scan finds the advertiser while it advertises ...
                    try await rescan()
                    _ = try await scanner.report(from: advertiser.address)

                    try await advertiser.host.setRadio(advertising: false, scanning: false)
                    _ = try await advertiser.waitFor("advertising off") { e in
                        if case .radio(let r) = e, !r.advertising { true } else { nil }
                    }
                    // ... and not once it stopped.
                    try await rescan()
                    try await Task.sleep(for: .seconds(1))
                    #expect(!seen())

                    try await advertiser.host.setRadio(advertising: true, scanning: true)
                    _ = try await scanner.report(from: advertiser.address)
                }
            }
        }

        @Test func aclFlowControlWithTheSingleBuffer() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try Self.peripheral(), try Self.central()]) { hosts in
                    let (server, client) = (hosts[0], hosts[1])
                    #expect(client.info.aclPacketCount == 1)
                    #expect(client.info.aclDataLength == 192)
                    try await server.advertising()
                    let link = try await client.host.connect(to: server.address, type: .public)
                    #expect(try await client.host.gatt(.exchangeMTU(), on: link) == .mtu(517))
                    for round in 0..<10 {
                        let value = try await client.host.gatt(
                            .readCharacteristic(TestGATT.long, inService: TestGATT.service), on: link)
                        #expect(value == .value(TestGATT.longValue), "round \(round)")
                        let data = [UInt8](repeating: UInt8(round), count: 500)
                        let written = try await client.host.gatt(
                            .writeCharacteristic(TestGATT.writable, inService: TestGATT.service, value: data), on: link)
                        #expect(written == .written, "round \(round)")
                    }
                    let writes = try await server.waitFor("ten long writes") { _ in
                        let w = server.events.compactMap { e -> [UInt8]? in if case .gattWrite(let w) = e { w.value } else { nil } }
                        return w.count >= 10 ? w : nil
                    }
                    #expect(writes == (0..<10).map { [UInt8](repeating: UInt8($0), count: 500) })
                }
            }
        }
    }
}
