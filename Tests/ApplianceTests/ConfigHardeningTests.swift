import Foundation
import Testing
@testable import Appliance
import VenueNode

/// Config files written by mistake or with intent: control characters, unusable diary paths,
/// plain-HTTP URLs, huge values and huge files.
@Suite struct ConfigHardeningTests {
    func problems(_ text: String) -> [String] {
        do {
            _ = try Settings.parse(text, file: "t.toml")
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func controlCharactersInStringsAreRefusedNotTruncated() {
        let found = problems(#"""
            [venue]
            country = 826
            state = 4
            code = 1
            name = "Bar\u0000 Evil"   # "\u0000" in a comment is fine
            location = 'a literal \u0000 is just text'
            area = """
            first line
            bell \U00000007"""
            """#)
        #expect(found == [
            "t.toml: venue.name: line 5: the string holds the control character \\u0000; control characters (NUL included) are not allowed",
            "t.toml: venue.area: line 9: the string holds the control character \\U00000007; control characters (NUL included) are not allowed",
            "t.toml: venue.area = \"first line\\nbell \\u0007\": must not contain control characters",
        ])
        // A tab written as an escape is a control character too; an escaped backslash is not.
        #expect(TOMLControlCharacters.find(in: #"a = "x\\u0000 y""#).isEmpty)
        #expect(TOMLControlCharacters.find(in: #"a = "\u007f""#).map(\.escape) == [#"\u007f"#])
    }

    @Test func theDiaryPathMustBeAbsoluteAndItsDirectoryMustExist() throws {
        let relative = problems(SettingsTests.minimal + "\n[diary]\npath = \"venue-data/diary.sqlite\"")
        #expect(relative.count == 1 && relative[0].contains("diary.path = \"venue-data/diary.sqlite\": must be the absolute path"))

        let dir = TemporaryDirectory("config")
        for (path, expected) in [
            (dir.file("missing/diary.sqlite"), "does not exist"),
            (dir.file("file/diary.sqlite"), "is not a directory"),
        ] {
            FileManager.default.createFile(atPath: dir.file("file"), contents: Data())
            let config = dir.file("c.toml")
            try (SettingsTests.minimal + "\n[diary]\npath = \"\(path)\"\n").write(toFile: config, atomically: true, encoding: .utf8)
            #expect(throws: ConfigError.self) { try Settings.load(path: config) }
            do {
                _ = try Settings.load(path: config)
            } catch {
                #expect(error.description.contains("diary.path = \"\(path)\""), "\(error)")
                #expect(error.description.contains(expected), "\(error)")
            }
        }
        // The service's state directory is created by systemd before it starts.
        #expect(Settings.directoryProblem(forFileAt: "/var/lib/venue-beacon/diary.sqlite") == nil)
    }

    @Test func theVenueURLMustBeHTTPS() {
        let found = problems(SettingsTests.minimal + "\nurl = \"http://example.org\"")
        #expect(found == ["t.toml: venue.url = \"http://example.org\": must be a URL starting with https://"])
        #expect(problems(SettingsTests.minimal + "\nurl = \"https://example.org\"").isEmpty)
    }

    @Test func aHugeValueIsCutInTheMessage() {
        let found = problems(SettingsTests.minimal.replacingOccurrences(of: "Erin's Stakehouse", with: String(repeating: "x", count: 1_000_000)))
        #expect(found.count == 1)
        #expect(found[0].utf8.count < 400, "\(found[0].prefix(400))")
        #expect(found[0].contains("(1000002 bytes in all)"))
    }

    @Test func aHugeFileIsRefusedUnread() throws {
        let dir = TemporaryDirectory("config")
        let path = dir.file("big.toml")
        FileManager.default.createFile(atPath: path, contents: nil)
        #expect(truncate(path, 200 << 20) == 0)
        do {
            _ = try Settings.load(path: path)
            Issue.record("a 200 MB config was accepted")
        } catch {
            #expect(error.description == "\(path): the file is 209715200 bytes; a config file is at most 1048576 bytes (a few KB is usual)")
        }
    }

    /// What `Settings.load` says about `config`, or "" when it loads.
    func loadProblem(_ config: String) -> String {
        do {
            _ = try Settings.load(path: config)
            return ""
        } catch {
            return error.description
        }
    }

    @Test func aConfigOrSendmailOthersCouldChangeIsRefusedSayingWhichFileAndMode() throws {
        let dir = TemporaryDirectory("trusted")
        let sendmail = dir.script("sendmail", "cat >/dev/null")
        let config = dir.file("c.toml")
        try (SettingsTests.minimal + "\n[export]\nemail = \"t@example.org\"\nsendmail = \"\(sendmail)\"\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        #expect(loadProblem(config) == "")

        chmod(config, 0o666)
        #expect(loadProblem(config) == "\(config): refusing a config file others can change: \(config) is writable by its group and others (mode 0666), who could change what runs as root: chmod go-w \(config)")
        chmod(config, 0o646)
        #expect(loadProblem(config).contains("\(config) is writable by others (mode 0646)"))
        chmod(config, 0o644)

        chmod(sendmail, 0o757)
        #expect(loadProblem(config) == "\(config): export.sendmail = \"\(sendmail)\": \(sendmail) is writable by others (mode 0757), who could change what runs as root: chmod go-w \(sendmail) (the program that hands export emails on, run as the user of venue-beacon: msmtp-mta's /usr/sbin/sendmail, say)")
        chmod(sendmail, 0o755)

        // A directory on the way that others may write to could swap either file; a sticky one cannot.
        chmod(dir.path, 0o777)
        let both = loadProblem(config)
        #expect(both.contains("\(config): refusing a config file others can change: \(dir.path) is writable by its group and others (mode 0777)"))
        #expect(both.contains("export.sendmail = \"\(sendmail)\": \(dir.path) is writable"))
        chmod(dir.path, 0o1777)
        #expect(loadProblem(config) == "")
        chmod(dir.path, 0o755)

        // A file another user owns: that user decides what runs.
        #expect(chown(sendmail, 4321, 0) == 0)
        #expect(loadProblem(config).contains("\(sendmail) belongs to uid 4321, who could change what runs as this user (root)"))
        #expect(chown(sendmail, 0, 0) == 0)
        chmod(sendmail, 0o755)

        // A link is judged by what it names, and the link's own directory.
        let link = dir.file("link")
        #expect(symlink(sendmail, link) == 0)
        try (SettingsTests.minimal + "\n[export]\nemail = \"t@example.org\"\nsendmail = \"\(link)\"\n").write(toFile: config, atomically: true, encoding: .utf8)
        #expect(loadProblem(config) == "")
        chmod(sendmail, 0o777)
        #expect(loadProblem(config).contains("\(sendmail) is writable by its group and others (mode 0777)"))
        chmod(sendmail, 0o755)
    }

    @Test func aSendmailThatCannotRunFailsConfigCheckOnlyWhenEmailIsOn() throws {
        let dir = TemporaryDirectory("sendmail")
        let config = dir.file("c.toml")
        _ = FileManager.default.createFile(atPath: dir.file("plain"), contents: Data("x".utf8), attributes: [.posixPermissions: 0o644])
        for (sendmail, expected) in [
            (dir.file("missing"), "\(dir.file("missing")) does not exist"),
            (dir.path, "\(dir.path) is not a regular file"),
            (dir.file("plain"), "\(dir.file("plain")) is not executable"),
        ] {
            try (SettingsTests.minimal + "\n[export]\nemail = \"t@example.org\"\nsendmail = \"\(sendmail)\"\n")
                .write(toFile: config, atomically: true, encoding: .utf8)
            #expect(loadProblem(config).hasPrefix("\(config): export.sendmail = \"\(sendmail)\": \(expected)"), "\(loadProblem(config))")
            // Without an address, sendmail is never run.
            try (SettingsTests.minimal + "\n[export]\nsendmail = \"\(sendmail)\"\n").write(toFile: config, atomically: true, encoding: .utf8)
            #expect(loadProblem(config) == "")
        }
    }

    @Test func sevenClosedDaysAreSaid() throws {
        let days = Schedule.weekdays.map { "\($0) = \"closed\"" }.joined(separator: "\n")
        let closed = try Settings.parse(SettingsTests.minimal + "\n[schedule]\n" + days + "\n", file: "t")
        #expect(closed.notes.contains { $0.contains("\"closed\" on all seven days: the node will never advertise or record") })
        let open = try Settings.parse(SettingsTests.minimal + "\n[schedule]\n" + days.replacingOccurrences(of: "sunday = \"closed\"", with: "sunday = \"open\"") + "\n", file: "t")
        #expect(!open.notes.contains { $0.contains("seven days") })
    }

    @Test func aFIFOOrADirectoryIsNeitherAConfigNorADiary() throws {
        let dir = TemporaryDirectory("kinds")
        let fifo = dir.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        // Read, the FIFO would wait for a writer forever: it is refused unread.
        #expect(loadProblem(fifo) == "\(fifo): it is a FIFO (named pipe), not a config file (a TOML text file)")
        #expect(loadProblem(dir.path) == "\(dir.path): it is a directory, not a config file (a TOML text file)")

        let config = dir.file("c.toml")
        for (diary, kind) in [(fifo, "a FIFO (named pipe)"), (dir.path, "a directory"), ("/dev/null", "a character device")] {
            try (SettingsTests.minimal + "\n[diary]\npath = \"\(diary)\"\n").write(toFile: config, atomically: true, encoding: .utf8)
            #expect(loadProblem(config) == "\(config): diary.path = \"\(diary)\": it is \(kind); the diary must be a regular file (or not there yet: it is created)")
        }
        try (SettingsTests.minimal + "\n[diary]\npath = \"\(dir.file("new.sqlite"))\"\n").write(toFile: config, atomically: true, encoding: .utf8)
        #expect(loadProblem(config) == "")
    }
}
