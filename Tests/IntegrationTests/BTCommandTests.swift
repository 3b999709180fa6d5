import BLEHost
import Foundation
import Testing

extension RadioTests {
    /// `venue-beacon bt …` end to end: the built binary against the emulator, with our host as the peer.
    @Suite struct BTCommandTests {
        static func venueBeacon(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            let process = try ChildProcess(ProcessRunner.venueBeacon.path, arguments)
            let status = try await process.waitForExit(timeout: .seconds(60))
            return (status, process.output)
        }

        @Test func infoShowsTheEmulatedController() async throws {
            let capture = NSTemporaryDirectory() + "venue-beacon-bt-info-\(getpid()).btsnoop"
            defer { unlink(capture) }
            try await BTVirt.run { btvirt in
                let (status, output) = try await Self.venueBeacon(["bt", "info", "--device", btvirt.leSpec, "--btsnoop", capture])
                #expect(status == 0, "\(output)")
                #expect(output.contains("address        00:AA:01:"), "\(output)")
                #expect(output.contains("LE buffers     192 bytes × 1"), "\(output)")
                #expect(output.contains("HCI version    "), "\(output)")
            }
            let btmon = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/btmon"), ["-r", capture], timeout: .seconds(30))
            #expect(btmon.output.contains("LE Read Buffer Size"), "\(btmon.output)")
        }

        @Test func scanPrintsOurAdvertAsJSON() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try HostRadioTests.peripheral()]) { hosts in
                    try await hosts[0].advertising()
                    let (status, output) = try await Self.venueBeacon(["bt", "scan", "--device", btvirt.leSpec, "--seconds", "1", "--json"])
                    #expect(status == 0, "\(output)")
                    let line = try #require(output.split(separator: "\n").first { $0.contains(hosts[0].address.description) })
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    #expect(json["address"] as? String == hosts[0].address.description)
                    #expect(json["addressType"] as? String == "public")
                    #expect(json["eventType"] as? String == "ADV_IND")
                    #expect(json["flags"] as? String == "0x06")
                    #expect(json["serviceUUIDs"] as? [String] == [TestGATT.service.fullString])
                    #expect(json["data"] as? String == Hex.encode(TestGATT.advertisingData))
                    #expect(json["rssi"] == nil)
                }
            }
        }

        @Test func readPrintsTheWholeLongValue() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try HostRadioTests.peripheral()]) { hosts in
                    try await hosts[0].advertising()
                    let (status, output) = try await Self.venueBeacon([
                        "bt", "read", "--device", btvirt.leSpec, "--address", hosts[0].address.description,
                        "--service", TestGATT.service.fullString, "--characteristic", TestGATT.long.fullString,
                    ])
                    #expect(status == 0, "\(output)")
                    #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == Hex.encode(TestGATT.longValue))
                }
            }
        }

        @Test func unusableDevicesFailWithTheReason() async throws {
            let (status, output) = try await Self.venueBeacon(["bt", "info", "--device", "hci0"])
            #expect(status == 69)
            #expect(output.contains("no Bluetooth support"), "\(output)")
            let missing = try await Self.venueBeacon(["bt", "info", "--device", "unix:/tmp/venue-beacon-nothing-here"])
            #expect(missing.status == 69)
            #expect(missing.output.contains("btvirt -s"), "\(missing.output)")
            let bad = try await Self.venueBeacon(["bt", "scan", "--device", "usb0"])
            #expect(bad.status == 64)
            #expect(bad.output.contains("unix:/path"), "\(bad.output)")
        }
    }
}
