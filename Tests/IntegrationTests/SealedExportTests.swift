import Foundation
import Glibc
import Testing

/// Exports sealed to the contact tracers (age) and signed by the node (minisign), end to end:
/// the real binary, msmtp, the SMTP sink, and Debian's `age` and `minisign` opening and
/// verifying what the node sent.
@Suite struct SealedExportTests {
    static let now = ExportDeliveryCommandTests.now
    static let name = "venue-diary-123123-20251111-20251125.csv"

    /// A tracers' key pair made by age-keygen, as docs/export.md tells tracers to.
    struct Tracers {
        let key: String
        let recipient: String

        init(_ dir: TemporaryDirectory, _ label: String = "tracers") throws {
            key = dir.path("\(label).key")
            let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age-keygen"), ["-o", key])
            guard made.status == 0 else { throw SMTPSink.SinkError(reason: made.output) }
            recipient = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age-keygen"), ["-y", key]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    static func open(_ file: String, key: String, into out: String) throws -> ProcessRunner.Result {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age"), ["-d", "-i", key, "-o", out, file])
    }

    static func verify(_ file: String, publicKey: String) throws -> ProcessRunner.Result {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/minisign"), ["-Vm", file, "-P", publicKey])
    }

    /// The node's public key as `venue-beacon identity` prints it (the line `minisign -P` takes).
    static func nodeKey(_ venue: ExportDeliveryCommandTests.Venue) throws -> (publicKey: String, fingerprint: String) {
        let identity = try venue.run(["identity"])
        #expect(identity.status == 0, "\(identity.output)")
        let lines = identity.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("untrusted comment: "))
        let fingerprint = identity.stderr.components(separatedBy: "fingerprint: ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return (String(lines.last ?? ""), fingerprint)
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    /// What `export --format csv` gives without sealing (another config over the same diary).
    static func plaintextCSV(_ venue: ExportDeliveryCommandTests.Venue) throws -> Data {
        let config = try String(contentsOfFile: venue.config, encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("recipients") }.joined(separator: "\n")
        let plainConfig = try venue.dir.write("plain.toml", config)
        let out = venue.dir.path("plain.csv")
        let result = try ProcessRunner.venueBeacon(
            ["export", "--format", "csv", "--now", now, "--output", out, "--config", plainConfig], environment: ["TZ": "UTC"])
        #expect(result.status == 0, "\(result.output)")
        return FileManager.default.contents(atPath: out) ?? Data()
    }

    @Test func theEmailedAttachmentIsSealedSignedAndOpensToTheCSV() throws {
        let port = SMTPSink.freePort()
        var tracers: Tracers!
        let venue = try ExportDeliveryCommandTests.Venue { dir in
            tracers = try Tracers(dir)
            return """
                email = "tracers@example.org"
                sendmail = "\(try msmtpSendmail(in: dir, port: port))"
                recipients = ["\(tracers.recipient)"]
                """
        }
        defer { venue.dir.remove() }

        // The server is down first: what waits in the outbox is sealed, and 0600.
        let queued = try venue.run(["export", "--deliver", "email", "--now", Self.now])
        #expect(queued.status == 75, "\(queued.output)")
        let outbox = venue.dir.path("outbox")
        let stored = try FileManager.default.contentsOfDirectory(atPath: outbox).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 2)
        for file in stored {
            #expect(Self.mode((outbox as NSString).appendingPathComponent(file)) == 0o600, "\(file)")
            let text = try String(contentsOfFile: (outbox as NSString).appendingPathComponent(file), encoding: .utf8)
            #expect(!text.contains(Data("visit_id,kind".utf8).base64EncodedString().prefix(12)))
        }
        #expect(Self.mode(venue.dir.path("node-signing.key")) == 0o600)

        let sink = SMTPSink(port: port, maildir: venue.dir.path("maildir"))
        try sink.start()
        defer { sink.stop() }
        let retried = try venue.run(["outbox", "retry"])
        #expect(retried.status == 0, "\(retried.output)")
        let files = sink.messageFiles()
        try #require(files.count == 1)
        let email = try DeliveredEmail(file: files[0], scratch: venue.dir)
        #expect(email.attachments.map(\.name) == [Self.name + ".age", Self.name + ".age.minisig"])

        // The tracers' side, as docs/export.md describes it: verify, then decrypt.
        let sealed = venue.dir.path(Self.name + ".age")
        FileManager.default.createFile(atPath: sealed, contents: email.attachments[0].data)
        FileManager.default.createFile(atPath: sealed + ".minisig", contents: email.attachments[1].data)
        let node = try Self.nodeKey(venue)
        let verified = try Self.verify(sealed, publicKey: node.publicKey)
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("file:\(Self.name).age\tvenue:123123"))
        #expect(verified.output.contains("visits:1"))
        let opened = try Self.open(sealed, key: tracers.key, into: venue.dir.path("opened.csv"))
        #expect(opened.status == 0, "\(opened.output)")
        #expect(try FileManager.default.contents(atPath: venue.dir.path("opened.csv")) == Self.plaintextCSV(venue))

        #expect(email.body.contains("Node key:  \(node.fingerprint)"))
        #expect(email.body.contains("Visits:    1"))
        #expect(email.body.contains("Venue:     Erin's Stakehouse"))
        #expect(!email.body.contains("aa01"))  // no identifier in the clear
    }

    @Test func exportOutputIsSealedAndSignedAndOnlyTheTracersKeyOpensIt() throws {
        var tracers: Tracers!
        let venue = try ExportDeliveryCommandTests.Venue { dir in
            tracers = try Tracers(dir)
            return "recipients = [\"\(tracers.recipient)\"]"
        }
        defer { venue.dir.remove() }
        let out = venue.dir.path("diary.csv.age")
        let result = try venue.run(["export", "--format", "csv", "--now", Self.now, "--output", out])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.contains("sealed to 1 age recipient"))
        #expect(Self.mode(out) == 0o600 && Self.mode(out + ".minisig") == 0o600)
        let bytes = try #require(FileManager.default.contents(atPath: out))
        #expect(bytes.starts(with: Data("age-encryption.org/v1\n".utf8)))
        #expect(try Self.verify(out, publicKey: try Self.nodeKey(venue).publicKey).status == 0)
        let plain = try Self.plaintextCSV(venue)
        #expect(try Self.open(out, key: tracers.key, into: venue.dir.path("o.csv")).status == 0)
        #expect(FileManager.default.contents(atPath: venue.dir.path("o.csv")) == plain)

        // Wrong key, truncated file, flipped bit: each fails loudly.
        let stranger = try Tracers(venue.dir, "stranger")
        let wrong = try Self.open(out, key: stranger.key, into: venue.dir.path("w.csv"))
        #expect(wrong.status != 0 && wrong.stderr.contains("no identity matched"), "\(wrong.output)")
        FileManager.default.createFile(atPath: venue.dir.path("cut.age"), contents: bytes.prefix(bytes.count - 10))
        #expect(try Self.open(venue.dir.path("cut.age"), key: tracers.key, into: venue.dir.path("c.csv")).status != 0)
        var flipped = bytes
        flipped[bytes.count - 20] ^= 0x80
        FileManager.default.createFile(atPath: out, contents: flipped)
        #expect(try Self.open(out, key: tracers.key, into: venue.dir.path("f.csv")).status != 0)
        #expect(try Self.verify(out, publicKey: try Self.nodeKey(venue).publicKey).status != 0)
    }

    @Test func anExportToStandardOutputIsSignedWhereSignatureSays() throws {
        let venue = try ExportDeliveryCommandTests.Venue { _ in "" }
        defer { venue.dir.remove() }
        let signature = venue.dir.path("stdout.csv.minisig")
        let signed = try venue.run(["export", "--now", Self.now, "--signature", signature])
        #expect(signed.status == 0, "\(signed.output)")
        #expect(Self.mode(signature) == 0o600)
        let saved = try venue.dir.write("stdout.csv", signed.stdout)
        let node = try Self.nodeKey(venue)
        let verified = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/minisign"), ["-Vm", saved, "-x", signature, "-P", node.publicKey])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("visits:1"), "\(verified.output)")
        #expect(try FileManager.default.contents(atPath: saved) == venue.exportedCSV())

        // Without --signature, standard output has nowhere for it: said, and nothing is written.
        let unsigned = try venue.run(["export", "--now", Self.now])
        #expect(unsigned.status == 0)
        #expect(unsigned.stderr.contains("the export is not signed: standard output has no file beside it"), "\(unsigned.stderr)")
        // A file written with --output keeps its PATH.minisig unless --signature names another.
        let out = venue.dir.path("mine.csv")
        let elsewhere = venue.dir.path("elsewhere.minisig")
        #expect(try venue.run(["export", "--now", Self.now, "--output", out, "--signature", elsewhere]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: out + ".minisig"))
        let checked = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/minisign"), ["-Vm", out, "-x", elsewhere, "-P", node.publicKey])
        #expect(checked.status == 0, "\(checked.output)")

        // Mistakes are usage errors naming the option.
        let withDelivery = try venue.run(["export", "--now", Self.now, "--deliver", "directory", "--signature", signature])
        #expect(withDelivery.status == 64 && withDelivery.stderr.contains("--signature"), "\(withDelivery.output)")
        let overItself = try venue.run(["export", "--now", Self.now, "--output", out, "--signature", out])
        #expect(overItself.status == 64 && overItself.stderr.contains("--signature"), "\(overItself.output)")
    }

    @Test func directoryDeliveryWritesOnlyTheSealedFileAndItsSignature() throws {
        var tracers: Tracers!
        let venue = try ExportDeliveryCommandTests.Venue { dir in
            tracers = try Tracers(dir)
            return "recipients = [\"\(tracers.recipient)\"]\ndirectory = \"\(dir.path("usb"))\"\nrequire_mount = false"
        }
        defer { venue.dir.remove() }
        try FileManager.default.createDirectory(atPath: venue.dir.path("usb"), withIntermediateDirectories: true)
        let result = try venue.run(["export", "--deliver", "directory", "--now", Self.now])
        #expect(result.status == 0, "\(result.output)")
        let names = try FileManager.default.contentsOfDirectory(atPath: venue.dir.path("usb")).sorted()
        #expect(names == [Self.name + ".age", Self.name + ".age.minisig"])
        let sealed = venue.dir.path("usb/\(Self.name).age")
        #expect(try Self.verify(sealed, publicKey: try Self.nodeKey(venue).publicKey).status == 0)
        #expect(try Self.open(sealed, key: tracers.key, into: venue.dir.path("o.csv")).status == 0)
        #expect(try FileManager.default.contents(atPath: venue.dir.path("o.csv")) == Self.plaintextCSV(venue))
    }

    @Test func plaintextEmailIsRefusedUnlessAskedForAndConfigCheckWarns() throws {
        let venue = try ExportDeliveryCommandTests.Venue { _ in "email = \"tracers@example.org\"\nsendmail = \"/usr/bin/false\"" }
        defer { venue.dir.remove() }
        let refused = try venue.run(["export", "--deliver", "email", "--now", Self.now])
        #expect(refused.status == 78, "\(refused.output)")
        #expect(refused.stderr.contains("refusing to email the diary unencrypted: set export.recipients"))
        let waiting = ((try? FileManager.default.contentsOfDirectory(atPath: venue.dir.path("outbox"))) ?? []).filter { !$0.hasPrefix(".") }
        #expect(waiting.isEmpty)
        let check = try venue.run(["config", "check"])
        #expect(check.status == 0)
        #expect(check.output.contains("export.recipients is empty"), "\(check.output)")
        // The operator's own local file stays possible, and is signed.
        let local = try venue.run(["export", "--now", Self.now, "--output", venue.dir.path("mine.csv")])
        #expect(local.status == 0, "\(local.output)")
        #expect(try Self.verify(venue.dir.path("mine.csv"), publicKey: try Self.nodeKey(venue).publicKey).status == 0)
    }

    @Test func aMistypedRecipientIsAConfigErrorNamingTheKey() throws {
        let venue = try ExportDeliveryCommandTests.Venue { _ in "" }
        defer { venue.dir.remove() }
        let good = try Tracers(venue.dir)
        var typo = Array(good.recipient)
        typo[12] = typo[12] == "q" ? "p" : "q"
        let config = try String(contentsOfFile: venue.config, encoding: .utf8) + "\nrecipients = [\"\(String(typo))\"]\n"
        try config.write(toFile: venue.config, atomically: true, encoding: .utf8)
        let check = try venue.run(["config", "check"])
        #expect(check.status == 78)
        #expect(check.stderr.contains("export.recipients"), "\(check.output)")
        #expect(check.stderr.contains("wrong checksum"), "\(check.output)")
    }

    @Test func identityIsCreatedOnceAndTheJSONExportNamesIt() throws {
        let venue = try ExportDeliveryCommandTests.Venue { _ in "" }
        defer { venue.dir.remove() }
        let first = try Self.nodeKey(venue)
        let second = try Self.nodeKey(venue)
        #expect(first.publicKey == second.publicKey && first.publicKey.hasPrefix("RW"))
        #expect(first.fingerprint.count == 39)
        let json = try venue.run(["export", "--format", "json", "--now", Self.now])
        #expect(json.status == 0)
        #expect(json.stdout.contains("\"node_key\": \"\(first.fingerprint)\""))
        #expect(json.stdout.contains("\"visit_count\": 1,"))
        let key = try String(contentsOfFile: venue.dir.path("node-signing.key"), encoding: .utf8).split(separator: "\n")[1]
        #expect(!json.output.contains(key))
    }
}

/// `venue-beacon open`: what `age -r` sealed for a test key opens with ours; wrong key exits 65.
@Suite struct OpenCommandTests {
    @Test func opensWhatAgeSealedAndRefusesAWrongKey() throws {
        let dir = try TemporaryDirectory("open-cli")
        defer { dir.remove() }
        let tracers = try SealedExportTests.Tracers(dir)
        let plain = try dir.write("p.csv", "visit_id,kind\r\n1,herald\r\n")
        let sealed = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age"), ["-r", tracers.recipient, "-o", dir.path("p.csv.age"), plain])
        #expect(sealed.status == 0, "\(sealed.output)")
        let opened = try ProcessRunner.venueBeacon(["open", dir.path("p.csv.age"), "-i", tracers.key, "-o", dir.path("o.csv")])
        #expect(opened.status == 0, "\(opened.output)")
        #expect(FileManager.default.contents(atPath: dir.path("o.csv")) == FileManager.default.contents(atPath: plain))
        let stranger = try SealedExportTests.Tracers(dir, "stranger")
        let wrong = try ProcessRunner.venueBeacon(["open", dir.path("p.csv.age"), "-i", stranger.key, "-o", dir.path("w.csv")])
        #expect(wrong.status == 65)
        #expect(wrong.stderr.contains("no identity matched"), "\(wrong.output)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("w.csv")))
    }
}
