import BLEHost
import BLETransport
import Foundation
import Testing

extension RadioTests {
    /// `venue-beacon run` as systemd runs it: the notify protocol on a test `$NOTIFY_SOCKET`, and
    /// SIGUSR1 exporting the diary to a directory, the real binary against btvirt.
    @Suite struct ApplianceServiceRadioTests {
        @Test func notifiesSystemdAndExportsOnceOnSIGUSR1() async throws {
            try await BTVirt.run { btvirt in
                let socket = try NotifyListener(NSTemporaryDirectory() + "venue-notify-\(getpid()).sock")
                let usb = try TemporaryDirectory("venue-usb")
                defer { usb.remove() }
                let state = try TemporaryDirectory("venue-state")
                defer { state.remove() }
                // The live commit policy: a check-in reaches the file within 2 minutes, or when an
                // export asks for it.
                let node = try await RunningNode.start(
                    commitSeconds: 120,
                    extra: """
                        [export]
                        directory = "\(usb.url.path)"
                        require_mount = false
                        signing_key = "\(state.path("node-signing.key"))"
                        """,
                    environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "2000000"])
                defer { node.remove() }
                try await socket.waitFor("READY=1")
                let status = try await socket.waitFor("STATUS=", prefix: true)
                #expect(status.hasPrefix("STATUS=advertising and scanning; 0 phones present"), "\(status)")
                try await socket.waitFor("WATCHDOG=1")  // every second (WATCHDOG_USEC / 2)
                try await socket.waitFor("WATCHDOG=1")

                // A phone checks in just before the export: not committed yet.
                let phone = try btvirt.bumble("herald_phone.py", ["android", Hex.encode(testPayload(8)), "20"])
                try await node.process.waitForOutput("check-in herald:CAAAAA")
                #expect(try node.export().isEmpty)

                // SIGUSR1: one export, delivered to the directory and logged; the service wrote
                // its diary first, so the phone that just checked in is in it.
                kill(node.process.processIdentifier, SIGUSR1)
                try await node.process.waitForOutput("SIGUSR1: directory:")
                // The export and the node's signature of it (.minisig).
                let all = try FileManager.default.contentsOfDirectory(atPath: usb.url.path)
                #expect(all.count == 2 && all.contains { $0.hasSuffix(".csv.minisig") }, "\(all)")
                let files = all.filter { !$0.hasSuffix(".minisig") }
                #expect(files.count == 1, "\(files)")
                #expect(files.allSatisfy { $0.hasPrefix("venue-diary-123123-") && $0.hasSuffix(".csv") }, "\(files)")
                let csv = try String(contentsOfFile: usb.url.appendingPathComponent(files.first ?? "").path, encoding: .utf8)
                #expect(csv.contains(",herald,\(Hex.encode(testPayload(8))),"), "\(csv)")
                _ = phone
                socket.drain()  // room for STOPPING=1 (a datagram queue holds about ten)

                #expect(try await node.terminate().status == 0)
                try await socket.waitFor("STOPPING=1")
                // Nothing but the service itself spoke to systemd (no child's `ERRNO=`).
                #expect(socket.messages.allSatisfy { ["READY", "STATUS", "WATCHDOG", "STOPPING"].contains($0.prefix { $0 != "=" }) }, "\(socket.messages)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: usb.url.path).count == 2)  // exported once, and signed
            }
        }

        /// Reports carrying the Herald service (the venue's adverts) seen by `scanner`.
        static func venueReports(_ scanner: RunningHost) -> Int {
            scanner.events.filter { event in
                guard case .advertisingReport(let report) = event else { return false }
                return report.advertisingData.serviceUUIDs.contains(BluetoothUUID(UInt16(0xFCF6)))
            }.count
        }

        /// Makes `scanner` scan afresh (btvirt reports current advertisers when scanning is enabled).
        static func rescan(_ scanner: RunningHost) async throws {
            try await scanner.host.setRadio(advertising: true, scanning: false)
            try await scanner.host.setRadio(advertising: true, scanning: true)
        }

        @Test func closedByTheScheduleTheNodeNeitherAdvertisesNorScans() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try HostRadioTests.scanner()]) { hosts in
                    let scanner = hosts[0]
                    let socket = try NotifyListener(NSTemporaryDirectory() + "venue-notify-closed-\(getpid()).sock")
                    let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
                    let node = try await RunningNode.start(
                        extra: "[schedule]\n" + days.map { "\($0) = \"closed\"" }.joined(separator: "\n"),
                        environment: ["NOTIFY_SOCKET": socket.path], waitFor: "opening hours: closed")
                    defer { node.remove() }
                    // Ready once the controller is, though closed; the status says so.
                    try await socket.waitFor("READY=1")
                    try await Self.rescan(scanner)
                    try await Task.sleep(for: .seconds(2))
                    #expect(Self.venueReports(scanner) == 0)
                    #expect(!node.process.output.contains("Bluetooth: advertising \"Erin's Stakehouse\""), "\(node.process.output)")
                    try await socket.waitFor("STATUS=closed (opening hours); ", prefix: true)
                    #expect(try await node.terminate().status == 0)
                }
            }
        }
    }
}
