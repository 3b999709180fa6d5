import Foundation
import Testing

extension RadioTests {
    /// `venue-beacon run` as systemd runs it: the notify protocol on a test `$NOTIFY_SOCKET`, and
    /// SIGUSR1 exporting the diary to a directory, the real binary against btvirt.
    @Suite struct ApplianceServiceRadioTests {
        @Test func notifiesSystemdAndExportsOnceOnSIGUSR1() async throws {
            try await BTVirt.run { _ in
                let socket = try NotifyListener(NSTemporaryDirectory() + "venue-notify-\(getpid()).sock")
                let usb = try TemporaryDirectory("venue-usb")
                defer { usb.remove() }
                let node = try await RunningNode.start(
                    extra: """
                        [export]
                        directory = "\(usb.url.path)"
                        require_mount = false
                        """,
                    environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "2000000"])
                defer { node.remove() }
                try await socket.waitFor("READY=1")
                #expect(socket.messages.contains { $0.hasPrefix("STATUS=") }, "\(socket.messages)")
                try await socket.waitFor("WATCHDOG=1")  // every second (WATCHDOG_USEC / 2)
                try await socket.waitFor("WATCHDOG=1")

                // SIGUSR1: one export, delivered to the directory and logged.
                kill(node.process.processIdentifier, SIGUSR1)
                try await node.process.waitForOutput("SIGUSR1: directory:")
                let files = try FileManager.default.contentsOfDirectory(atPath: usb.url.path)
                #expect(files.count == 1, "\(files)")
                #expect(files.allSatisfy { $0.hasPrefix("venue-diary-123123-") && $0.hasSuffix(".csv") }, "\(files)")

                #expect(try await node.terminate().status == 0)
                try await socket.waitFor("STOPPING=1")
                #expect(try FileManager.default.contentsOfDirectory(atPath: usb.url.path).count == 1)
            }
        }
    }
}
