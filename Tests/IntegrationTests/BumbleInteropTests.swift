import BLEHost
import BLETransport
import Testing

extension RadioTests {
    /// Google's Bumble, an independent host, as the peer: proves we speak the protocol, not just
    /// our own dialect.
    @Suite struct BumbleInteropTests {
        @Test func bumbleCentralReadsAndWritesOurServer() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try HostRadioTests.peripheral()]) { hosts in
                    let server = hosts[0]
                    try await server.advertising()
                    let client = try btvirt.bumble(
                        "gatt_client.py",
                        [
                            server.address.description, "public", TestGATT.service.fullString, TestGATT.long.fullString,
                            TestGATT.writable.fullString, "c0ffee",
                        ])
                    let status = try await client.waitForExit(timeout: .seconds(30))
                    #expect(status == 0, "\(client.output)")
                    #expect(client.output.contains("VALUE " + Hex.encode(TestGATT.longValue)), "\(client.output)")
                    #expect(client.output.contains("WROTE"))
                    let write = try await server.waitFor("write from Bumble") { e in
                        if case .gattWrite(let w) = e { return w }
                        return nil
                    }
                    #expect(write.value == [0xC0, 0xFF, 0xEE])
                    #expect(write.withResponse)
                }
            }
        }

        @Test func ourClientReadsAndWritesABumbleServer() async throws {
            try await BTVirt.run { btvirt in
                let service = "12345678-1234-5678-1234-56789abcdef0"
                let readable = "12345678-1234-5678-1234-56789abcdef1"
                let writable = "12345678-1234-5678-1234-56789abcdef2"
                let value = (0..<400).map { UInt8(truncatingIfNeeded: $0 * 3 + 1) }
                let peer = try btvirt.bumble("gatt_server.py", [service, readable, Hex.encode(value), writable, "60"])
                let line = try await peer.waitForLine(startingWith: "READY")
                let address = try #require(BluetoothAddress(line.dropFirst("READY ".count).prefix(17)))

                try await btvirt.withHosts([try HostRadioTests.central()]) { hosts in
                    let client = hosts[0].host
                    let link = try await client.connect(to: address, type: .public)
                    _ = try await client.gatt(.exchangeMTU(), on: link)
                    let read = try await client.gatt(
                        .readCharacteristic(try #require(BluetoothUUID(readable)), inService: try #require(BluetoothUUID(service))),
                        on: link)
                    #expect(read == .value(value))
                    let written = try await client.gatt(
                        .writeCharacteristic(
                            try #require(BluetoothUUID(writable)), inService: try #require(BluetoothUUID(service)),
                            value: [0xBE, 0xEF]),
                        on: link)
                    #expect(written == .written)
                    try await peer.waitForOutput("WRITE beef")
                    try await client.disconnect(link)
                    try await peer.waitForOutput("DISCONNECTED")
                }
            }
        }

        @Test func eachSeesTheOthersAdverts() async throws {
            try await BTVirt.run { btvirt in
                let bumbleData: [UInt8] = [0x02, 0x01, 0x06, 0x07, 0x09] + Array("bumble".utf8)
                let advertiser = try btvirt.bumble("advertise.py", [Hex.encode(bumbleData), "60"])
                let line = try await advertiser.waitForLine(startingWith: "READY")
                let bumbleAddress = try #require(BluetoothAddress(line.dropFirst("READY ".count).prefix(17)))

                try await btvirt.withHosts([try HostRadioTests.scanner()]) { hosts in
                    let report = try await hosts[0].report(from: bumbleAddress)
                    #expect(Array(report.data) == bumbleData)
                    #expect(report.advertisingData.localName?.string == "bumble")
                }

                // Bumble drops the report btvirt sends the instant its scan is enabled (it has not
                // marked itself scanning yet), so it scans first and sees ours when we enable advertising.
                let bumbleScanner = try btvirt.bumble("scan.py", ["30"])
                try await bumbleScanner.waitForOutput("READY")
                try await btvirt.withHosts([try HostRadioTests.peripheral()]) { hosts in
                    let ours = hosts[0]
                    try await bumbleScanner.waitForOutput(
                        "{\"address\": \"\(ours.address)\", \"type\": 0, \"data\": \"\(Hex.encode(TestGATT.advertisingData))\"}")
                }
            }
        }
    }
}
