import BLEHost
import BLETransport
import Foundation
import Testing

extension RadioTests {
    @Suite struct TransportSmokeTests {
        static let reset: UInt16 = 0x0C03
        static let readBDAddr: UInt16 = 0x1009

        @Test func unixTransportResetsTheEmulatedController() async throws {
            try await BTVirt.run { btvirt in
                let t = try await TestTransport.open(btvirt.leSpec)
                defer { t.close() }
                #expect(try await t.command(Self.reset) == [0x00])
                let address = try await t.command(Self.readBDAddr)
                #expect(address.count == 7)
                #expect(address.first == 0x00)
                // btvirt numbers its controllers 00:AA:01:<index>:00:42.
                #expect(Array(address.suffix(6)).suffix(2) == [0xAA, 0x00])
            }
        }

        /// Two of our transports and a Bumble host share the emulated air: each gets its own
        /// controller, and our scanner sees both the Bumble advert and our own, byte for byte.
        @Test func twoTransportsAndBumbleCoexist() async throws {
            try await BTVirt.run { btvirt in
                let bumbleData = "0201060908627566626c652d31"  // flags, name "bumble-1"
                let bumble = try btvirt.bumble("advertise.py", [bumbleData, "20"])
                let ready = try await bumble.waitForLine(startingWith: "READY")
                let bumbleAddress = try #require(ready.split(separator: " ").last?.prefix(17))

                let scanner = try await TestTransport.open(btvirt.leSpec)
                let advertiser = try await TestTransport.open(btvirt.leSpec)
                defer {
                    scanner.close()
                    advertiser.close()
                }
                for t in [scanner, advertiser] {
                    #expect(try await t.command(Self.reset) == [0])
                    // LE Set Event Mask: connection complete, advertising report (and the defaults).
                    #expect(try await t.command(0x2001, [0x1F, 0, 0, 0, 0, 0, 0, 0]) == [0])
                }
                let a1 = try await scanner.command(Self.readBDAddr)
                let a2 = try await advertiser.command(Self.readBDAddr)
                #expect(a1 != a2)
                let scannerAddress = BluetoothAddress(littleEndianBytes: a1.suffix(6))
                #expect(scannerAddress.description != bumbleAddress)

                // Passive scan, window = interval, duplicates not filtered.
                #expect(try await scanner.command(0x200B, [0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00]) == [0])
                #expect(try await scanner.command(0x200C, [0x01, 0x00]) == [0])
                let bumbleAdvert = try await scanner.receive { Self.advertisingData($0, hex: bumbleData) }
                #expect(bumbleAdvert.isEmpty == false)

                // Our advertiser: non-connectable, own data; the scanner gets it when it is enabled.
                let ourData: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0xFF, 0x34, 0x12, 0xAB, 0xCD]
                #expect(
                    try await advertiser.command(0x2006, [0xA0, 0x00, 0xA0, 0x00, 0x03, 0x00, 0x00] + [0, 0, 0, 0, 0, 0] + [0x07, 0x00])
                        == [0])
                #expect(try await advertiser.command(0x2008, [UInt8(ourData.count)] + ourData + [UInt8](repeating: 0, count: 31 - ourData.count)) == [0])
                #expect(try await advertiser.command(0x200A, [0x01]) == [0])
                let ours = try await scanner.receive { Self.advertisingData($0, hex: Hex.encode(ourData)) }
                #expect(ours.isEmpty == false)
            }
        }

        /// A capture of real traffic opens in `btmon -r` (BlueZ's own reader).
        @Test func btsnoopCaptureOpensInBtmon() async throws {
            let capture = NSTemporaryDirectory() + "venue-beacon-capture-\(getpid()).btsnoop"
            defer { unlink(capture) }
            try await BTVirt.run { btvirt in
                let t = try await TestTransport.open(btvirt.leSpec, capture: capture)
                defer { t.close() }
                #expect(try await t.command(Self.reset) == [0])
                _ = try await t.command(Self.readBDAddr)
            }
            let btmon = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/btmon"), ["-r", capture], timeout: .seconds(30))
            #expect(btmon.status == 0)
            let text = btmon.output
            #expect(text.contains("HCI Command: Reset (0x03|0x0003)"), "\(text)")
            #expect(text.contains("HCI Event: Command Complete (0x0e)"), "\(text)")
            #expect(text.contains("Read BD ADDR (0x04|0x0009)"), "\(text)")
            #expect(text.contains("00:AA:01:"), "\(text)")
        }

        /// True if `packet` is an LE Advertising Report carrying exactly the AD bytes `hex`.
        static func advertisingData(_ packet: H4Packet, hex: String) -> Bool {
            let b = packet.body
            guard packet.type == .event, b.count > 3, b[0] == 0x3E, b[2] == 0x02 else { return false }
            return Hex.encode(b).contains(String(format: "%02x", hex.count / 2) + hex)
        }
    }
}
