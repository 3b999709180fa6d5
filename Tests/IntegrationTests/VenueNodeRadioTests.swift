import BLEHost
import BLETransport
import Foundation
import Testing
import VenueDiary

extension RadioTests {
    /// `venue-beacon run` end to end on the emulator: the real binary as the venue, phones played
    /// by Bumble and by our own host, the diary read back through `venue-beacon export`. btvirt
    /// reports an advert only when advertising is (re)enabled, so phones that should look present
    /// re-enable theirs every second; it reports no RSSI, so visits have no RSSI statistics unless
    /// a phone wrote one.
    @Suite struct VenueNodeRadioTests {
        static let fcf6 = BluetoothUUID(UInt16(0xFCF6))
        static let androidSignal = BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!

        @Test func bumbleCentralReadsTheWorkedExamplePayload() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start()
                defer { node.remove() }
                let reader = try btvirt.bumble("venue_client.py", ["read"])
                #expect(try await reader.waitForExit(timeout: .seconds(40)) == 0, "\(reader.output)")
                #expect(reader.output.contains("VALUE \(RunningNode.workedExample)\n"), "\(reader.output)")
                // SIGHUP and SIGUSR1 are answered in the log; the node runs on.
                kill(node.process.processIdentifier, SIGHUP)
                try await node.process.waitForOutput("SIGHUP: the configuration is read only at start")
                kill(node.process.processIdentifier, SIGUSR1)
                try await node.process.waitForOutput("SIGUSR1:")
                #expect(node.process.exitStatus == nil)
                #expect(try await node.terminate().status == 0)
            }
        }

        @Test func anAndroidPhoneIsReadCheckedInExportedAndClosedAtItsLastSighting() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start(checkIn: 2, checkOut: 4)
                defer { node.remove() }
                let payload = Hex.encode(testPayload(7))
                let phone = try btvirt.bumble("herald_phone.py", ["android", payload, "6"])
                try await phone.waitForOutput("READ", timeout: .seconds(20))
                // Checked in after check_in_seconds and committed at once: the export shows it open.
                let present = try await node.waitForVisits("checked-in visit") { $0.contains { $0.payload == payload } }
                #expect(present.map(\.kind) == ["herald"])
                #expect(present.first?.checkOut == nil)
                try await node.process.waitForOutput("check-in herald:BwAAAA")  // the short payload id
                // The phone stops advertising; its visit closes at its last sighting.
                try await phone.waitForOutput("DONE", timeout: .seconds(20))
                let stopped = Date()
                try await node.process.waitForOutput("check-out herald:BwAAAA")
                // Check-outs are committed with the next write (at most 30 s later); SIGTERM
                // writes everything at once.
                #expect(try await node.terminate().status == 0)
                let visits = try node.export()
                #expect(visits.count == 1, "\(visits)")
                let visit = try #require(visits.first)
                let checkOut = try #require(visit.checkOutTime)
                #expect(abs(checkOut.timeIntervalSince(stopped)) <= 2.5, "check-out \(visit.checkOut ?? "") vs last advert \(stopped)")
                #expect(checkOut.timeIntervalSince(try #require(visit.checkInTime)) >= 4)
                #expect(visit.samples == 0 && visit.rssiMax == nil)  // btvirt measures no RSSI
                // The CSV export carries it too.
                let csv = try ProcessRunner.venueBeacon(["export", "--config", node.config, "--days", "all"])
                #expect(csv.stdout.contains(",herald,\(payload),"), "\(csv.stdout)")
            }
        }

        @Test func aPhoneThatNeverAdvertisesIsRecordedFromItsWrites() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start(checkIn: 2, checkOut: 4)
                defer { node.remove() }
                let payload = testPayload(9)
                // The phone is our own host: it scans for the venue, connects, writes its payload,
                // then its RSSI every second.
                try await btvirt.withHosts([HostConfiguration(database: try TestGATT.database(name: "phone"), scanning: LESetScanParameters())]) { hosts in
                    let phone = hosts[0]
                    let venue = try await Self.findVenue(phone)
                    let link = try await phone.host.connect(to: venue.address, type: venue.addressType)
                    _ = try await phone.host.gatt(.exchangeMTU(), on: link)
                    let write = { @Sendable (value: [UInt8]) async throws -> GATTClientResult in
                        try await phone.host.gatt(.writeCharacteristic(Self.androidSignal, inService: Self.fcf6, value: value), on: link)
                    }
                    #expect(try await write([0x01, UInt8(payload.count), 0] + payload) == .written)
                    for _ in 0..<4 {
                        try await Task.sleep(for: .seconds(1))
                        #expect(try await write([0x02, 0xC9, 0xFF]) == .written)  // -55 dBm
                    }
                    try await node.waitForVisits("visit of the writing phone") { $0.contains { $0.payload == Hex.encode(payload) } }
                    try await node.process.waitForOutput("check-in herald:CQAAAA")
                    try await phone.host.disconnect(link)
                }
                // SIGTERM closes the diary within 5 s, writing the visit as it stands.
                let (status, seconds) = try await node.terminate()
                #expect(status == 0)
                #expect(seconds < 5)
                #expect(node.process.output.contains("diary closed"))
                let visits = try node.export()
                #expect(visits.count == 1, "\(visits)")
                let visit = try #require(visits.first)
                #expect(visit.kind == "herald" && visit.payload == Hex.encode(payload))
                #expect(visit.samples == 4 && visit.rssiMax == -55)  // the four RSSI writes
                #expect(try #require(visit.checkInTime) < Date())
            }
        }

        @Test func payloadSharingReachesAnIPhoneWithThePayloadOfAnother() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start()
                defer { node.remove() }
                let first = Hex.encode(testPayload(1)), second = Hex.encode(testPayload(2))
                let iPhone1 = try btvirt.bumble("herald_phone.py", ["iphone", first, "30", "address=C2:00:00:00:00:01"])
                let iPhone2 = try btvirt.bumble("herald_phone.py", ["iphone", second, "30", "address=C3:00:00:00:00:01"])
                // 0x03, RSSI (none measured: 0), length 129, then the other iPhone's payload.
                try await iPhone1.waitForOutput("WRITE 0300008100" + second, timeout: .seconds(40))
                try await iPhone2.waitForOutput("WRITE 0300008100" + first, timeout: .seconds(40))
                #expect(try await node.terminate().status == 0)
            }
        }

        @Test func aGAENAdvertiserIsRecordedAsGAENWithItsRPI() async throws {
            try await BTVirt.run { btvirt in
                // With Herald-format logs and a btsnoop capture.
                let logs = NSTemporaryDirectory() + "venue-node-logs-\(getpid())"
                let capture = NSTemporaryDirectory() + "venue-node-\(getpid()).btsnoop"
                defer {
                    try? FileManager.default.removeItem(atPath: logs)
                    unlink(capture)
                }
                try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
                let node = try await RunningNode.start(extra: """
                    [herald]
                    log_directory = "\(logs)"
                    """, bluetoothExtra: "btsnoop = \"\(capture)\"")
                defer { node.remove() }
                let rpi = "0102030405060708090a0b0c0d0e0f10"
                _ = try btvirt.bumble("herald_phone.py", ["gaen", rpi, "6", "address=C1:00:00:00:00:01"])
                let visits = try await node.waitForVisits("GAEN visit") { $0.contains { $0.kind == "gaen" } }
                #expect(visits.map(\.payload) == [rpi])
                #expect(try await node.terminate().status == 0)
                // The 4 bytes of encrypted metadata heard with the identifier are kept with its
                // visit (the exposure check decrypts them for the phone's TX power).
                let stored = try DiaryStore(path: node.directory.path("diary.sqlite"), readOnly: true).visits()
                #expect(stored.map(\.metadata) == [[0x40, 0x08, 0x00, 0x00]])
                // contacts.csv has the detection and the "read" of the RPI (short name: base64 of bytes 3…).
                let contacts = try String(contentsOfFile: logs + "/contacts.csv", encoding: .utf8)
                #expect(contacts.hasPrefix("time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data\n"))
                #expect(contacts.contains(",C1:00:00:00:00:01,,2,,,,,,BAUGBw"), "\(contacts)")
                // The capture is a btsnoop file (H4 datalink 1002) with records after the header.
                let snoop = try #require(FileManager.default.contents(atPath: capture))
                #expect(Array(snoop.prefix(8)) == Array("btsnoop\0".utf8))
                #expect(snoop.count > 16 + 100)
            }
        }

        @Test func malformedSignalWritesGetATTErrorsAndTheNodeKeepsWorking() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start()
                defer { node.remove() }
                let payload = testPayload(5)
                try await btvirt.withHosts([HostConfiguration(database: try TestGATT.database(name: "phone"), scanning: LESetScanParameters())]) { hosts in
                    let phone = hosts[0]
                    let venue = try await Self.findVenue(phone)
                    let link = try await phone.host.connect(to: venue.address, type: venue.addressType)
                    _ = try await phone.host.gatt(.exchangeMTU(), on: link)
                    let malformed: [[UInt8]] = [
                        [0x02, 0xC4],  // RSSI too short
                        [0x02, 0xC4, 0xFF, 0x00],  // RSSI too long
                        [0x01, 0x05, 0x00, 0xAA],  // payload shorter than its length field
                        [0x01, 0x01, 0x00] + [UInt8](repeating: 0xAB, count: 300),  // oversized: long write, 0x0D at execute
                        [0x03, 0xC4],  // sharing without its length
                    ]
                    for value in malformed {
                        do {
                            _ = try await phone.host.gatt(.writeCharacteristic(Self.androidSignal, inService: Self.fcf6, value: value), on: link)
                            Issue.record("\(Hex.encode(value)) was accepted")
                        } catch let error as HostError {
                            guard case .gatt(.att(let code, _, _)) = error else {
                                Issue.record("\(Hex.encode(value)): \(error)")
                                continue
                            }
                            #expect(code == .invalidAttributeValueLength, "\(Hex.encode(value))")
                        }
                    }
                    // The same link goes on working: well-formed writes are recorded.
                    let write = { @Sendable (value: [UInt8]) async throws -> GATTClientResult in
                        try await phone.host.gatt(.writeCharacteristic(Self.androidSignal, inService: Self.fcf6, value: value), on: link)
                    }
                    #expect(try await write([0x01, UInt8(payload.count), 0] + payload) == .written)
                    for _ in 0..<3 {
                        try await Task.sleep(for: .seconds(1))
                        #expect(try await write([0x02, 0xC0, 0xFF]) == .written)
                    }
                    try await phone.host.disconnect(link)
                }
                try await node.process.waitForOutput("check-in herald:BQAAAA")
                // And phones still read the venue.
                let reader = try btvirt.bumble("venue_client.py", ["read"])
                #expect(try await reader.waitForExit(timeout: .seconds(40)) == 0, "\(reader.output)")
                #expect(reader.output.contains("VALUE \(RunningNode.workedExample)\n"))
                #expect(try await node.terminate().status == 0)
                #expect(try node.export().map(\.payload) == [Hex.encode(payload)])
            }
        }

        @Test func anAddressRotatingPhoneStaysOneVisit() async throws {
            try await BTVirt.run { btvirt in
                let node = try await RunningNode.start(checkIn: 2, checkOut: 4)
                defer { node.remove() }
                let payload = Hex.encode(testPayload(3))
                let phone = try btvirt.bumble("herald_phone.py", ["android", payload, "8", "rotate=2", "pseudo=112233445566"])
                try await phone.waitForOutput("ADDRESS C0:00:00:00:00:03", timeout: .seconds(20))
                try await phone.waitForOutput("DONE", timeout: .seconds(20))
                try await node.process.waitForOutput("check-out herald:AwAAAA")
                #expect(try await node.terminate().status == 0)
                let visits = try node.export()
                #expect(visits.count == 1, "\(visits)")
                let visit = try #require(visits.first)
                #expect(visit.payload == payload)
                #expect(try #require(visit.checkOutTime).timeIntervalSince(try #require(visit.checkInTime)) >= 6)
            }
        }

        @Test func theNodeSurvivesItsControllerDisappearing() async throws {
            try await BTVirt.run { btvirt in
                let socket = NSTemporaryDirectory() + "venue-node-relay-\(getpid()).sock"
                let relay = try btvirt.bumble("relay.py", [socket])
                try await relay.waitForOutput("READY")
                let node = try await RunningNode.start(device: "unix:" + socket)
                defer { node.remove() }
                kill(relay.processIdentifier, SIGUSR1)
                try await node.process.waitForOutput("Bluetooth: unavailable")
                try await node.process.waitForOutput("retrying with backoff")
                try await relay.waitForOutput("ACCEPTING")
                // Back: the venue is advertised again and readable.
                let reader = try btvirt.bumble("venue_client.py", ["read"])
                #expect(try await reader.waitForExit(timeout: .seconds(60)) == 0, "\(reader.output)\n\(node.process.output)")
                #expect(reader.output.contains("VALUE \(RunningNode.workedExample)\n"))
                let advertised = node.process.output.components(separatedBy: "Bluetooth: advertising \"Erin's Stakehouse\"").count - 1
                #expect(advertised == 2, "\(node.process.output)")
                #expect(try await node.terminate().status == 0)
            }
        }

        /// Scans with our host until the venue's advert (service FCF6) shows up.
        static func findVenue(_ host: RunningHost) async throws -> LEAdvertisingReport {
            try await host.waitFor("the venue's advert", timeout: .seconds(20)) { event in
                if case .advertisingReport(let report) = event, report.advertisingData.serviceUUIDs.contains(fcf6) { return report }
                return nil
            }
        }
    }
}
