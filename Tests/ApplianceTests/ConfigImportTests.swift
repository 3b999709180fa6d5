import Foundation
import Glibc
import Testing
@testable import Appliance

/// `config import`: the config and the mail account from the boot partition, on real
/// directories (a "card" and an "/etc").
@Suite struct ConfigImportTests {
    static let valid = SettingsTests.minimal + "\n"
    static let old = SettingsTests.minimal.replacingOccurrences(of: "Erin's Stakehouse", with: "The Old Name") + "\n"
    static let msmtprc = """
        defaults
        auth on
        tls on
        account default
        host smtp.example.org
        from venue@example.org
        user venue
        password s3cret-Pa55
        """

    let card = TemporaryDirectory("card")
    let etc = TemporaryDirectory("etc")

    var config: String { etc.file("venue-beacon.toml") }
    var importer: ConfigImport {
        ConfigImport(bootDirectory: card.path, configPath: config, msmtprcPath: etc.file("msmtprc"), group: getegid())
    }

    func write(_ text: String, _ path: String, mode: mode_t = 0o600) {
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        chmod(path, mode)
    }

    func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    func mode(_ path: String) -> (mode: mode_t, group: gid_t)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o7777, info.st_gid)
    }

    @Test func aValidConfigIsAppliedRemovedFromTheCardAndReceipted() throws {
        write(Self.old, config)
        write(Self.valid, card.file("venue-beacon.toml"), mode: 0o755)
        let report = importer.run(now: Date(timeIntervalSince1970: 1_800_000_000))

        let fingerprint = ConfigImport.sha256(Array(Self.valid.utf8))
        #expect(report.config == .applied(bytes: Self.valid.utf8.count, fingerprint: fingerprint, previous: config + ".previous"))
        #expect(report.cardProblems.isEmpty)
        #expect(read(config) == Self.valid)
        #expect(read(config + ".previous") == Self.old)
        #expect(mode(config)?.mode == 0o640)
        #expect(mode(config)?.group == getegid())
        #expect(mode(config + ".previous")?.mode == 0o640)
        #expect(card.names() == ["venue-beacon-applied.txt"])
        let receipt = read(card.file("venue-beacon-applied.txt")) ?? ""
        #expect(receipt.contains(fingerprint))
        #expect(receipt.contains("2027-01-15 08:00:00 UTC"))
        // No staged file left beside the config.
        #expect(etc.names() == ["venue-beacon.toml", "venue-beacon.toml.previous"])
        // The fingerprint is the SHA-256 the installer's laptop computes.
        #expect(ConfigImport.sha256(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func anInvalidConfigChangesNothingAndListsEveryProblemOnTheCard() throws {
        write(Self.old, config)
        let bad = SettingsTests.minimal.replacingOccurrences(of: "country = 826", with: "country = 99999") + "\n[diary]\ncheck_in_seconds = 0\ncolour = \"red\"\n"
        write(bad, card.file("venue-beacon.toml"))
        write("old receipt", card.file("venue-beacon-applied.txt"))
        let report = importer.run()

        guard case .refused(let problems) = report.config else {
            Issue.record("expected a refusal, got \(report.config)")
            return
        }
        #expect(problems.count == 3)
        #expect(report.refused)
        // The running config is untouched, nothing is staged or kept.
        #expect(read(config) == Self.old)
        #expect(etc.names() == ["venue-beacon.toml"])
        // The file stays for its fix; the errors say what config check says, naming the card's file.
        #expect(read(card.file("venue-beacon.toml")) == bad)
        let errors = read(card.file("venue-beacon-error.txt")) ?? ""
        let expected = thrownError(ConfigError.self) { try Settings.parse(bad, file: card.file("venue-beacon.toml")) }
        for line in expected?.problems.map(\.description) ?? ["(no problems)"] { #expect(errors.contains(line)) }
        #expect(errors.contains("venue.country = 99999"))
        #expect(errors.contains("diary.colour"))
        #expect(BootPartition.importRefused(in: card.path))
    }

    @Test func placeProblemsCountAsConfigCheckCountsThem() throws {
        // Valid TOML whose diary directory does not exist: config check refuses it, so does the import.
        let text = Self.valid + "[diary]\npath = \"\(etc.file("no-such-dir"))/diary.sqlite\"\n"
        write(text, card.file("venue-beacon.toml"))
        let report = importer.run()
        guard case .refused(let problems) = report.config else {
            Issue.record("expected a refusal, got \(report.config)")
            return
        }
        #expect(problems.count == 1)
        #expect(problems.first?.contains("diary.path") == true)
        #expect(problems.first?.hasPrefix(card.file("venue-beacon.toml")) == true)
        #expect(!FileManager.default.fileExists(atPath: config))
    }

    @Test func anEmptyCardChangesNothing() {
        write(Self.old, config)
        let report = importer.run()
        #expect(report.nothingToDo)
        #expect(card.names().isEmpty)
        #expect(read(config) == Self.old)
        #expect(!BootPartition.importRefused(in: card.path))
    }

    @Test func aFixedConfigClearsTheOldErrorFile() {
        write("old errors", card.file("venue-beacon-error.txt"))
        write(Self.valid, card.file("venue-beacon.toml"))
        let report = importer.run()
        #expect(report.config.isApplied)
        // No config before it: nothing to keep.
        if case .applied(_, _, let previous) = report.config { #expect(previous == nil) }
        #expect(card.names() == ["venue-beacon-applied.txt"])
    }

    @Test func aRepeatedImportKeepsTheRealPreviousConfig() {
        // A power cut after the rename but before the card's file was removed: the next start
        // imports the same bytes again, and the previous config must survive it.
        write(Self.old, config + ".previous")
        write(Self.valid, config)
        write(Self.valid, card.file("venue-beacon.toml"))
        let report = importer.run()
        #expect(report.config.isApplied)
        #expect(read(config + ".previous") == Self.old)
        #expect(read(config) == Self.valid)
    }

    @Test func theMailAccountIsInstalledWithoutAFingerprintOfItsPassword() {
        write(Self.msmtprc, card.file("venue-beacon-msmtprc"))
        let report = importer.run()
        #expect(report.msmtprc == .applied(bytes: Self.msmtprc.utf8.count, fingerprint: nil, previous: nil))
        #expect(report.config == .absent)
        #expect(read(etc.file("msmtprc")) == Self.msmtprc)
        #expect(mode(etc.file("msmtprc"))?.mode == 0o640)
        #expect(card.names() == ["venue-beacon-applied.txt"])
        let receipt = read(card.file("venue-beacon-applied.txt")) ?? ""
        #expect(receipt.contains("venue-beacon-msmtprc"))
        #expect(!receipt.contains("s3cret"))
        #expect(!receipt.contains(ConfigImport.sha256(Array(Self.msmtprc.utf8))))
    }

    @Test func aMailAccountWithoutServerOrSenderIsRefusedWhileAValidConfigIsApplied() {
        write(Self.valid, card.file("venue-beacon.toml"))
        write("account default\nuser venue\n", card.file("venue-beacon-msmtprc"))
        let report = importer.run()
        #expect(report.config.isApplied)
        #expect(report.msmtprc == .refused([
            card.file("venue-beacon-msmtprc") + ": no host line: msmtp needs the SMTP server (host smtp.example.org)",
            card.file("venue-beacon-msmtprc") + ": no from line: msmtp needs the sender address (from venue@example.org)",
        ]))
        #expect(!FileManager.default.fileExists(atPath: etc.file("msmtprc")))
        #expect(card.names() == ["venue-beacon-applied.txt", "venue-beacon-error.txt", "venue-beacon-msmtprc"])
        #expect(read(card.file("venue-beacon-error.txt"))?.contains("no host line") == true)
        #expect(BootPartition.importRefused(in: card.path))
    }

    @Test func aDirectoryOrSymlinkOnTheCardIsRefusedByName() {
        mkdir(card.file("venue-beacon.toml"), 0o755)
        symlink("/etc/passwd", card.file("venue-beacon-msmtprc"))
        let report = importer.run()
        #expect(report.config == .refused([card.file("venue-beacon.toml") + ": it is a directory, not a text file"]))
        #expect(report.msmtprc == .refused([card.file("venue-beacon-msmtprc") + ": it is a symbolic link; put the file itself there"]))
    }

    @Test func theBootPartitionIsFirmwareWhenThereElseBoot() {
        #expect(BootPartition.directory(isDirectory: { _ in true }) == "/boot/firmware")
        #expect(BootPartition.directory(isDirectory: { $0 == "/boot" }) == "/boot")
        #expect(BootPartition.directory(isDirectory: { _ in false }) == "/boot")
        // The status file only on a FAT boot partition: a plain Debian /boot is left alone.
        #expect(BootPartition.statusDirectory(isFAT: { _ in false }) == nil)
        #expect(BootPartition.statusDirectory(isFAT: { _ in true }) == BootPartition.directory())
        #expect(!BootPartition.isFAT(card.path))
        // /proc/self/mounts of a Raspberry Pi OS bookworm card.
        let mounts = """
            /dev/mmcblk0p2 / ext4 rw,noatime 0 0
            devtmpfs /dev devtmpfs rw,relatime,size=1867124k,nr_inodes=466781,mode=755 0 0
            /dev/mmcblk0p1 /boot/firmware vfat rw,relatime,fmask=0022,dmask=0022,codepage=437,iocharset=ascii,shortname=mixed,errors=remount-ro 0 0
            /dev/sda1 /media/usb\\040stick vfat rw 0 0
            """
        #expect(BootPartition.fileSystemType(of: "/boot/firmware", mounts: mounts) == "vfat")
        #expect(BootPartition.fileSystemType(of: "/boot/firmware/venue-beacon.toml", mounts: mounts) == "vfat")
        #expect(BootPartition.fileSystemType(of: "/boot", mounts: mounts) == "ext4")
        #expect(BootPartition.fileSystemType(of: "/boot/firmwareX", mounts: mounts) == "ext4")
        #expect(BootPartition.fileSystemType(of: "/media/usb stick", mounts: mounts) == "vfat")
    }

    @Test func filesWrittenOnTheCardAreWholeAndLeaveNoTemporaries() throws {
        let path = card.file("venue-beacon-status.txt")
        try InstalledFile.write(Array("first\n".utf8), to: path, access: .init(mode: 0o644, group: nil))
        try InstalledFile.write(Array("second\n".utf8), to: path, access: .init(mode: 0o644, group: nil))
        #expect(read(path) == "second\n")
        #expect(card.names() == ["venue-beacon-status.txt"])
    }
}
