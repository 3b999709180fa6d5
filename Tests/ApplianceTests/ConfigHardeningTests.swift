import Foundation
import Testing
@testable import Appliance

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
}
