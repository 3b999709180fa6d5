import Foundation
import Testing

/// `systemd/venue-beacon.service` checked by systemd's own tools, and the binary run under the
/// memory protection the unit asks for.
@Suite struct SystemdUnitTests {
    static let unit = ProcessRunner.repositoryRoot.appendingPathComponent("systemd/venue-beacon.service").path
    static let analyze = URL(fileURLWithPath: "/usr/bin/systemd-analyze")

    /// The unit with ExecStart pointing at the built binary (verify insists that it exists).
    func unitCopy(_ dir: TemporaryDirectory) throws -> String {
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
        #expect(text.contains("\nExecStart=/usr/bin/venue-beacon run\n"))
        return try dir.write(
            "venue-beacon.service",
            text.replacingOccurrences(of: "ExecStart=/usr/bin/venue-beacon", with: "ExecStart=" + ProcessRunner.venueBeacon.path))
    }

    @Test func verifyFindsNothingToSay() throws {
        let dir = try TemporaryDirectory("unit")
        defer { dir.remove() }
        let result = try ProcessRunner.run(Self.analyze, ["verify", try unitCopy(dir)])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty, "\(result.output)")
    }

    /// The venue hub's unit: verified too, a notify service with no capability at all.
    @Test func theHubsUnitVerifiesAndHoldsNoCapability() throws {
        let dir = try TemporaryDirectory("unit")
        defer { dir.remove() }
        let source = ProcessRunner.repositoryRoot.appendingPathComponent("systemd/venue-beacon-hub.service").path
        let text = try String(contentsOfFile: source, encoding: .utf8)
        #expect(text.contains("\nExecStart=/usr/bin/venue-beacon hub --config /etc/venue-beacon/venue-hub.toml\n"))
        #expect(text.contains("\nType=notify\n") && text.contains("\nCapabilityBoundingSet=\n") && !text.contains("AF_BLUETOOTH"))
        let unit = try dir.write(
            "venue-beacon-hub.service",
            text.replacingOccurrences(of: "ExecStart=/usr/bin/venue-beacon", with: "ExecStart=" + ProcessRunner.venueBeacon.path))
        let result = try ProcessRunner.run(Self.analyze, ["verify", unit])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty, "\(result.output)")
    }

    /// The exposure score recorded in docs/appliance.md; a change to the unit that raises it
    /// fails here (lower is better: update the docs and this number when it drops).
    @Test func securityExposureStaysAt2Point1() throws {
        let dir = try TemporaryDirectory("unit")
        defer { dir.remove() }
        let result = try ProcessRunner.run(Self.analyze, ["security", "--offline=true", "--no-pager", try unitCopy(dir)])
        let line = result.output.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
        #expect(line.contains(": 2.1 OK"), "\(result.output)")
        let docs = try String(contentsOf: ProcessRunner.repositoryRoot.appendingPathComponent("docs/appliance.md"), encoding: .utf8)
        #expect(docs.contains("exposure 2.1"))
    }

    @Test func unitHasTheSettingsTheProductNeeds() throws {
        let text = try String(contentsOfFile: Self.unit, encoding: .utf8)
        for line in [
            "Type=notify", "NotifyAccess=main", "WatchdogSec=30", "Restart=on-failure", "RestartPreventExitStatus=78",
            "AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW", "CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW",
            "SupplementaryGroups=gpio", "StateDirectory=venue-beacon", "ConfigurationDirectory=venue-beacon",
            "RestrictAddressFamilies=AF_UNIX AF_BLUETOOTH AF_INET AF_INET6", "DevicePolicy=closed", "DeviceAllow=char-gpiochip rw",
            "MemoryDenyWriteExecute=yes", "UMask=0077",
        ] {
            #expect(text.contains("\n" + line + "\n"), "\(line)")
        }
    }

    /// MemoryDenyWriteExecute=yes refuses writable+executable memory. The kernel's
    /// PR_SET_MDWE (6.3+) applies the same rule to a process and everything it executes: the
    /// binary must work under it (export, SQLite, spawning sendmail).
    @Test func binaryWorksWithoutWritableExecutableMemory() throws {
        let dir = try TemporaryDirectory("mdwe")
        defer { dir.remove() }
        let wrapper = try dir.write("mdwe.py", """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(65, 1, 0, 0, 0) != 0:   # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN
                sys.exit("PR_SET_MDWE: " + os.strerror(ctypes.get_errno()))
            os.execv(sys.argv[1], sys.argv[1:])
            """)
        let config = try dir.write("c.toml", """
            [venue]
            country = 826
            state = 4
            code = 1
            name = "x"
            [diary]
            path = "\(dir.path("diary.sqlite"))"
            [export]
            email = "t@example.org"
            from = "v@example.org"
            sendmail = "/bin/false"
            outbox = "\(dir.path("outbox"))"
            plaintext = true
            signing_key = "\(dir.path("node-signing.key"))"
            """)
        let python = URL(fileURLWithPath: "/usr/bin/env")
        let probe = try ProcessRunner.run(python, ["python3", wrapper, "/usr/bin/python3", "-c", "import ctypes; print(ctypes.CDLL(None).prctl(66, 0, 0, 0, 0))"])
        try #require(probe.stdout == "1\n", "PR_SET_MDWE not in force: \(probe.output)")

        let replay = try dir.write("s.csv", "time,kind,payload,rssi\n1763805600,herald,aa01,-60\n1763805900,herald,aa01,-60\n")
        let replayed = try ProcessRunner.run(python, ["python3", wrapper, ProcessRunner.venueBeacon.path, "diary", "replay", replay, "--config", config])
        #expect(replayed.status == 0, "\(replayed.output)")
        // sendmail (/bin/false) refuses: the email is queued, exit 75, after export and spawn.
        let exported = try ProcessRunner.run(python, ["python3", wrapper, ProcessRunner.venueBeacon.path, "export", "--deliver", "email", "--config", config])
        #expect(exported.status == 75, "\(exported.output)")
        #expect(exported.stderr.contains("/bin/false exited with status 1"))
    }
}
