import Foundation
import Testing

/// `venue-beacon export --deliver` and `venue-beacon outbox` end to end: the real binary, a
/// real diary, msmtp as the sendmail interface and a real SMTP server (aiosmtpd).
@Suite struct ExportDeliveryCommandTests {
    static let now = "2025-11-25T10:00:00Z"

    /// A venue with a diary holding one visit, and an `[export]` section.
    struct Venue {
        let dir: TemporaryDirectory
        let config: String

        init(recordingDays: String = "\"forever\"", export: (TemporaryDirectory) throws -> String) throws {
            dir = try TemporaryDirectory("delivery-cli")
            config = try dir.write("venue-beacon.toml", """
                [venue]
                country = 826
                state = 4
                code = 123123
                name = "Erin's Stakehouse"
                [diary]
                path = "\(dir.path("diary.sqlite"))"
                share_days = 14
                recording_days = \(recordingDays)
                [export]
                from = "venue@example.org"
                outbox = "\(dir.path("outbox"))"
                signing_key = "\(dir.path("node-signing.key"))"
                \(try export(dir))
                """)
            let sightings = try dir.write("s.csv", """
                time,kind,payload,rssi
                1763805600,herald,aa01,-60
                1763805900,herald,aa01,-58
                1763806200,herald,aa01,-61
                """)
            let replay = try run(["diary", "replay", sightings])
            guard replay.status == 0 else { throw SMTPSink.SinkError(reason: replay.output) }
        }

        func run(_ args: [String]) throws -> ProcessRunner.Result {
            try ProcessRunner.venueBeacon(args + ["--config", config], environment: ["TZ": "UTC"])
        }

        /// What `venue-beacon export --format csv` prints for the same window and time.
        func exportedCSV() throws -> Data {
            let path = dir.path("export.csv")
            let result = try run(["export", "--format", "csv", "--now", ExportDeliveryCommandTests.now, "--output", path])
            #expect(result.status == 0, "\(result.output)")
            return FileManager.default.contents(atPath: path) ?? Data()
        }
    }

    static func emailVenue(port: UInt16) throws -> Venue {
        try Venue { dir in
            """
            email = "tracers@example.org"
            plaintext = true
            sendmail = "\(try msmtpSendmail(in: dir, port: port))"
            """
        }
    }

    @Test func emailedAttachmentIsTheExportByteForByte() throws {
        let port = SMTPSink.freePort()
        let venue = try Self.emailVenue(port: port)
        defer { venue.dir.remove() }
        let sink = SMTPSink(port: port, maildir: venue.dir.path("maildir"))
        try sink.start()
        defer { sink.stop() }

        let result = try venue.run(["export", "--deliver", "email", "--now", Self.now])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.contains("emailed venue-diary-123123-20251111-20251125.csv and its signature (1 visits) to tracers@example.org"))

        let files = sink.messageFiles()
        try #require(files.count == 1)
        let email = try DeliveredEmail(file: files[0], scratch: venue.dir)
        #expect(email.attachmentName == "venue-diary-123123-20251111-20251125.csv")
        #expect(try email.attachment == venue.exportedCSV())
        #expect(email.headers["To"] == "tracers@example.org")
        #expect(email.headers["From"] == "Erin's Stakehouse <venue@example.org>")
        #expect(email.headers["Subject"] == "Venue diary Erin's Stakehouse (123123): 20251111 to 20251125")
        #expect(email.headers["MIME-Version"] == "1.0")
        #expect(email.headers["Date"] == "Tue, 25 Nov 2025 10:00:00 +0000")
        #expect(email.body.contains("Visits:    1"))
        #expect(email.body.contains("Window:    2025-11-11 10:00:00 UTC to 2025-11-25 10:00:00 UTC"))
    }

    @Test func whileTheServerIsDownTheEmailWaitsInTheOutboxAndLandsOnce() throws {
        let port = SMTPSink.freePort()
        let venue = try Self.emailVenue(port: port)
        defer { venue.dir.remove() }

        let queued = try venue.run(["export", "--deliver", "email", "--now", Self.now])
        #expect(queued.status == 75, "\(queued.output)")
        #expect(queued.stderr.contains("was not accepted"))
        #expect(queued.stderr.contains("kept in the outbox"))
        let listed = try venue.run(["outbox", "list"])
        #expect(listed.stderr.contains("1 email waiting"), "\(listed.output)")
        let messageID = try #require(listed.stdout.split(separator: " ").first { $0.hasPrefix("<venue-diary.123123.") })

        let sink = SMTPSink(port: port, maildir: venue.dir.path("maildir"))
        try sink.start()
        defer { sink.stop() }
        let retried = try venue.run(["outbox", "retry"])
        #expect(retried.status == 0, "\(retried.output)")
        #expect(retried.stderr.contains("1 delivered, 0 waiting"))
        let again = try venue.run(["outbox", "retry"])
        #expect(again.stderr.contains("0 delivered, 0 waiting"))

        let files = sink.messageFiles()
        try #require(files.count == 1)  // exactly once
        let email = try DeliveredEmail(file: files[0], scratch: venue.dir)
        #expect(email.headers["Message-ID"] == String(messageID))  // the Message-ID it was queued with
        #expect(try email.attachment == venue.exportedCSV())
    }

    @Test func noAddressConfiguredIsRefusedBeforeExporting() throws {
        let venue = try Venue { _ in "" }
        defer { venue.dir.remove() }
        let result = try venue.run(["export", "--deliver", "email"])
        #expect(result.status == 73)
        #expect(result.stderr.contains("no email address is configured: set export.email"))
    }

    @Test func directoryDeliveryWritesTheExport() throws {
        let venue = try Venue { dir in "directory = \"\(dir.path("usb"))\"\nrequire_mount = false" }
        defer { venue.dir.remove() }
        try FileManager.default.createDirectory(atPath: venue.dir.path("usb"), withIntermediateDirectories: true)
        let result = try venue.run(["export", "--deliver", "directory", "--now", Self.now])
        #expect(result.status == 0, "\(result.output)")
        let written = venue.dir.path("usb/venue-diary-123123-20251111-20251125.csv")
        #expect(result.stderr.contains("wrote \(written) (1 visits)"))
        #expect(try FileManager.default.contents(atPath: written) == venue.exportedCSV())
    }

    @Test func missingUnmountedReadOnlyAndUnwritableDirectoriesAreRefusedClearly() throws {
        let venue = try Venue { dir in "directory = \"\(dir.path("usb"))\"" }
        defer { venue.dir.remove() }
        let usb = venue.dir.path("usb")

        var result = try venue.run(["export", "--deliver", "directory"])
        #expect(result.status == 73)
        #expect(result.stderr.contains("export directory \(usb) does not exist: is the USB stick plugged in and mounted?"))

        try FileManager.default.createDirectory(atPath: usb, withIntermediateDirectories: true)
        result = try venue.run(["export", "--deliver", "directory"])
        #expect(result.stderr.contains("nothing is mounted on export directory \(usb)"), "\(result.output)")

        // A real read-only file system: a tmpfs mounted read-only (the tests run as root, whom
        // permissions do not stop, but EROFS does).
        let mount = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/mount"), ["-t", "tmpfs", "-o", "ro,size=64k,mode=0755", "tmpfs", usb])
        try #require(mount.status == 0, "mounting a read-only tmpfs failed: \(mount.output)")
        defer { _ = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/umount"), [usb]) }
        result = try venue.run(["export", "--deliver", "directory"])
        #expect(result.status == 73)
        #expect(result.stderr.contains("export directory \(usb) is read-only"), "\(result.output)")

        // Writable by root only, and the command run as nobody (setpriv drops to uid 65534).
        let remount = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/mount"), ["-o", "remount,rw", usb])
        try #require(remount.status == 0, "\(remount.output)")
        result = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--reuid=65534", "--regid=65534", "--clear-groups", ProcessRunner.venueBeacon.path, "export", "--deliver", "directory", "--config", venue.config])
        #expect(result.status == 73, "\(result.output)")
        #expect(result.stderr.contains("export directory \(usb) is not writable by this user (uid 65534): permission denied"))
    }

    /// A queued email holds the visits in plain text: it goes when the diary's retention would
    /// delete the first of them, undelivered if need be.
    @Test func theOutboxNeverOutlivesTheVisitsItCarries() throws {
        let venue = try Venue(recordingDays: "31") { _ in
            """
            email = "tracers@example.org"
            plaintext = true
            sendmail = "/usr/bin/false"
            """
        }
        defer { venue.dir.remove() }
        #expect(try venue.run(["export", "--deliver", "email", "--now", Self.now]).status == 75)
        #expect(try venue.run(["outbox", "list"]).stderr.contains("1 email waiting"))
        // The visit checked out at 2025-11-22T10:10Z: purged (and its email dropped) 31 days on.
        let early = try venue.run(["diary", "purge", "--now", "2025-12-23T10:00:00Z"])
        #expect(early.status == 0, "\(early.output)")
        #expect(!early.stdout.contains("dropped"))
        #expect(try venue.run(["outbox", "list"]).stderr.contains("1 email waiting"))
        let late = try venue.run(["diary", "purge", "--now", "2025-12-23T10:20:00Z"])
        #expect(late.stdout.contains("purged 1 visits"), "\(late.output)")
        #expect(late.stdout.contains("dropped 1 undelivered email from the outbox"), "\(late.output)")
        #expect(try venue.run(["outbox", "list"]).stderr.contains("0 emails waiting"))
        let eml = try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("outbox")).filter { !$0.hasPrefix(".") }
        #expect(eml.isEmpty, "\(eml)")
    }

    /// The hostile tester's repro: recording_days = 0, a sendmail that always fails.
    @Test func recordingDaysZeroLeavesNothingInTheOutboxAfterAPurge() throws {
        let venue = try Venue(recordingDays: "0") { _ in
            """
            email = "tracers@example.org"
            plaintext = true
            sendmail = "/usr/bin/false"
            """
        }
        defer { venue.dir.remove() }
        #expect(try venue.run(["export", "--deliver", "email", "--now", Self.now]).status == 75)
        #expect(try venue.run(["diary", "purge"]).stdout.contains("dropped 1 undelivered email"))
        let left = try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("outbox")).filter { !$0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func outboxDropDeletesOneEmailUnsent() throws {
        let venue = try Venue { _ in
            """
            email = "tracers@example.org"
            plaintext = true
            sendmail = "/usr/bin/false"
            """
        }
        defer { venue.dir.remove() }
        #expect(try venue.run(["export", "--deliver", "email", "--now", Self.now]).status == 75)
        let listed = try venue.run(["outbox", "list"])
        let id = try #require(listed.stdout.split(separator: " ").first.map(String.init))
        let dropped = try venue.run(["outbox", "drop", id])
        #expect(dropped.status == 0, "\(dropped.output)")
        #expect(try venue.run(["outbox", "list"]).stderr.contains("0 emails waiting"))
        let again = try venue.run(["outbox", "drop", id])
        #expect(again.status == 66)
        #expect(again.stderr.contains("no email \(id) in the outbox"))
        let files = try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("outbox")).filter { !$0.hasPrefix(".") }
        #expect(files.isEmpty, "\(files)")
    }
}
