import Foundation
import Testing

/// What a hostile or careless operator does to the command line: odd things at `--output`, a
/// full disk, a damaged or read-only diary, a huge sightings file. The real binary each time.
@Suite struct HostileFileTests {
    typealias Venue = DiaryCommandTests.Venue

    static func replayed(_ diaryKeys: String = "") throws -> Venue {
        let venue = try Venue(diaryKeys: diaryKeys)
        let file = try venue.dir.write("s.csv", DiaryCommandTests.twoPhones)
        let replay = try venue.run(["diary", "replay", file])
        #expect(replay.status == 0, "\(replay.output)")
        return venue
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode : 0
    }

    /// Runs `venue-beacon ARGS --config CONFIG` under `sh` with umask 022, as an operator's shell.
    static func withUmask022(_ venue: Venue, _ args: [String]) throws -> ProcessRunner.Result {
        let quoted = (args + ["--config", venue.config]).map { "'\($0)'" }.joined(separator: " ")
        return try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "umask 022; exec '\(ProcessRunner.venueBeacon.path)' \(quoted)"])
    }

    @Test func exportIntoACharacterDeviceWritesIntoItAndLeavesItADevice() throws {
        let venue = try Self.replayed()
        defer { venue.dir.remove() }
        let device = venue.dir.path("null")
        // The same device as /dev/null, made here so a regression cannot replace the system's.
        try #require(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0, "mknod needs root, as CI runs")
        let r = try venue.run(["export", "--days", "all", "--output", device])
        #expect(r.status == 0, "\(r.output)")
        #expect(Self.mode(device) & S_IFMT == S_IFCHR)
        #expect(try FileManager.default.contentsOfDirectory(atPath: venue.dir.url.path).allSatisfy { !$0.contains(".tmp-") && !$0.hasSuffix(".partial") })
    }

    @Test func exportIntoAFIFOFeedsTheReaderAndLeavesAFIFO() throws {
        let venue = try Self.replayed()
        defer { venue.dir.remove() }
        let fifo = venue.dir.path("pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        // The reader blocks in open(2) until the export opens the FIFO: a thread of its own, not
        // a task (the test's blocking run would hold a cooperative thread the task may need, and
        // on a busy 2-core machine the export then waits for a reader that never opens).
        final class Received: @unchecked Sendable {
            var data: Data?
            let done = DispatchSemaphore(value: 0)
        }
        let inbox = Received()
        let reader = Thread {
            defer { inbox.done.signal() }
            let fd = open(fifo, O_RDONLY)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = Glibc.read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                data.append(contentsOf: buffer[..<n])
            }
            inbox.data = data
        }
        reader.start()
        let r = try venue.run(["export", "--days", "all", "--output", fifo])
        #expect(r.status == 0, "\(r.output)")
        if r.status != 0 { close(open(fifo, O_WRONLY | O_NONBLOCK)) }  // a reader still waiting in open(2) (none opened it)
        inbox.done.wait()
        let received = inbox.data
        let plain = try venue.run(["export", "--days", "all"])
        #expect(received.map { String(decoding: $0, as: UTF8.self) } == plain.stdout)
        #expect(Self.mode(fifo) & S_IFMT == S_IFIFO)
    }

    @Test func exportToASymbolicLinkIsRefusedAndTheTargetIsUntouched() throws {
        let venue = try Self.replayed()
        defer { venue.dir.remove() }
        let target = try venue.dir.write("target.txt", "keep me")
        let link = venue.dir.path("link.csv")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let r = try venue.run(["export", "--days", "all", "--output", link])
        #expect(r.status == 73)
        #expect(r.stderr.contains("refusing to write to \(link): it is a symbolic link"))
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
        #expect(Self.mode(link) & S_IFMT == S_IFLNK)
    }

    @Test func outputsNeverReplaceTheDiaryTheNodeKeyTheConfigOrAnInput() throws {
        let keys = try TemporaryDirectory("keys")
        defer { keys.remove() }
        let key = keys.path("node-signing.key")
        let venue = try Self.replayed("[export]\nsigning_key = \"\(key)\"")
        defer { venue.dir.remove() }
        // The first signed export makes the node's key.
        #expect(try venue.run(["export", "--days", "all", "--output", venue.dir.path("first.csv")]).status == 0)
        try #require(FileManager.default.fileExists(atPath: key))
        func contents() -> [Data?] { [venue.diary, key, venue.config].map { FileManager.default.contents(atPath: $0) } }
        let before = contents()

        // The same files by other names: a hard link, a path through "..".
        try #require(link(venue.diary, venue.dir.path("alias.csv")) == 0)
        try FileManager.default.createDirectory(atPath: venue.dir.path("sub"), withIntermediateDirectories: true)
        let cases: [(path: String, role: String)] = [
            (venue.diary, "the diary"),
            (venue.dir.path("alias.csv"), "the diary (\(venue.diary))"),
            (venue.dir.path("sub/../diary.sqlite"), "the diary (\(venue.diary))"),
            (venue.diary + "-wal", "the diary's wal file"),
            (venue.diary + "-shm", "the diary's shm file"),
            (key, "the node's signing key"),
            (venue.config, "the config file"),
        ]
        for (path, role) in cases {
            let export = try venue.run(["export", "--days", "all", "--output", path])
            #expect(export.status == 73, "\(path): \(export.output)")
            #expect(export.stderr.contains("refusing to write to \(path): it is \(role), which this command must not overwrite"), "\(export.stderr)")
            let signature = try venue.run(["export", "--days", "all", "--output", venue.dir.path("x.csv"), "--signature", path])
            #expect(signature.status == 73, "\(path): \(signature.output)")
            #expect(signature.stderr.contains("it is \(role)"), "\(signature.stderr)")
        }
        // The export itself, by another name, is no place for its signature either.
        try #require(link(venue.dir.path("first.csv"), venue.dir.path("first-alias.csv")) == 0)
        let own = try venue.run(["export", "--days", "all", "--output", venue.dir.path("first.csv"), "--signature", venue.dir.path("first-alias.csv")])
        #expect(own.status == 64 && own.stderr.contains("name a file other than the export's"), "\(own.output)")

        #expect(contents() == before)
        #expect(try Venue.integrityOK(venue.diary))
        #expect(try venue.run(["diary", "stats"]).status == 0)
    }

    @Test func openNeverReplacesItsInputOrTheIdentity() throws {
        let dir = try TemporaryDirectory("open-protect")
        defer { dir.remove() }
        let identity = dir.path("tracer.key"), plain = try dir.write("p.csv", "visit_id\n1\n"), sealed = dir.path("p.csv.age")
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age-keygen"), ["-o", identity]).status == 0)
        let recipient = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age-keygen"), ["-y", identity]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age"), ["-r", recipient, "-o", sealed, plain]).status == 0)
        let before = [sealed, identity].map { FileManager.default.contents(atPath: $0) }
        for (path, role) in [(sealed, "the sealed file"), (identity, "the identity file")] {
            let r = try ProcessRunner.venueBeacon(["open", "-i", identity, "-o", path, sealed])
            #expect(r.status == 73, "\(r.output)")
            #expect(r.stderr.contains("refusing to write to \(path): it is \(role)"), "\(r.stderr)")
        }
        #expect([sealed, identity].map { FileManager.default.contents(atPath: $0) } == before)
        let good = try ProcessRunner.venueBeacon(["open", "-i", identity, "-o", dir.path("out.csv"), sealed])
        #expect(good.status == 0, "\(good.output)")
        #expect(FileManager.default.contents(atPath: dir.path("out.csv")) == FileManager.default.contents(atPath: plain))
    }

    @Test func openSaysWhatItWroteAndTakesCRLFIdentities() throws {
        let dir = try TemporaryDirectory("open-messages")
        defer { dir.remove() }
        let identity = dir.path("tracer.key")
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age-keygen"), ["-o", identity]).status == 0)
        let recipient = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age-keygen"), ["-y", identity]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // An identity file saved on Windows (CRLF), as age accepts it.
        let crlf = try dir.write("tracer-crlf.key", try String(contentsOfFile: identity, encoding: .utf8).replacingOccurrences(of: "\n", with: "\r\n"))
        let plain = dir.path("p.csv"), sealed = dir.path("p.csv.age")
        FileManager.default.createFile(atPath: plain, contents: Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 % 251) }))
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/age"), ["-r", recipient, "-o", sealed, plain]).status == 0)
        let good = try ProcessRunner.venueBeacon(["open", "-i", crlf, "-o", dir.path("out.csv"), sealed])
        #expect(good.status == 0, "\(good.output)")
        #expect(FileManager.default.contents(atPath: dir.path("out.csv")) == FileManager.default.contents(atPath: plain))

        // A bit flipped in the last chunk: the two chunks before it are authenticated and out.
        var bytes = try #require(FileManager.default.contents(atPath: sealed))
        bytes[bytes.count - 20] ^= 0x80
        FileManager.default.createFile(atPath: dir.path("damaged.age"), contents: bytes)
        let toStdout = try ProcessRunner.venueBeacon(["open", "-i", identity, dir.path("damaged.age")])
        #expect(toStdout.status == 65)
        #expect(toStdout.stderr.contains("the payload failed authentication"), "\(toStdout.stderr)")
        #expect(toStdout.stderr.contains("the 131072 bytes already on standard output were authenticated, but the rest is missing"), "\(toStdout.stderr)")
        let toFile = try ProcessRunner.venueBeacon(["open", "-i", identity, "-o", dir.path("partial.csv"), dir.path("damaged.age")])
        #expect(toFile.status == 65)
        #expect(toFile.stderr.contains("nothing was written to \(dir.path("partial.csv"))"), "\(toFile.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("partial.csv")))
    }

    /// What a file holds is quoted in messages; an ESC in it must not reach the terminal.
    @Test func controlCharactersFromFilesAreShownEscaped() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        let file = try venue.dir.write("s.csv", "time,kind,payload,rssi\n1795197600,\u{1B}[2J\u{1B}]0;owned\u{07},aa01,-60\n")
        let r = try venue.run(["diary", "replay", file])
        #expect(r.status == 65)
        #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\u{07}"), "\(r.stderr)")
        #expect(r.stderr.contains("kind '\\u{1B}[2J\\u{1B}]0;owned\\u{7}' is not one of"), "\(r.stderr)")
    }

    @Test func filesHoldingVisitsAre0600WhateverTheUmask() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        let file = try venue.dir.write("s.csv", DiaryCommandTests.twoPhones)
        let replay = try Self.withUmask022(venue, ["diary", "replay", file])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(Self.mode(venue.diary) & 0o777 == 0o600)
        // An existing export, world-readable, is replaced by a private one.
        let export = try venue.dir.write("export.csv", "old")
        chmod(export, 0o644)
        let r = try Self.withUmask022(venue, ["export", "--days", "all", "--output", export])
        #expect(r.status == 0, "\(r.output)")
        #expect(Self.mode(export) & 0o777 == 0o600)
        #expect(try String(contentsOfFile: export, encoding: .utf8).contains("aa01"))
    }

    @Test func aFullStandardOutputExitsWithIOErrorInsteadOfCrashing() throws {
        let venue = try Self.replayed()
        defer { venue.dir.remove() }
        for args in [["diary", "stats"], ["export", "--days", "all"], ["export", "--days", "all", "--output", "/dev/full"]] {
            let quoted = (args + ["--config", venue.config]).map { "'\($0)'" }.joined(separator: " ")
            let r = try ProcessRunner.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "exec '\(ProcessRunner.venueBeacon.path)' \(quoted) > /dev/full"])
            #expect(r.status == 74, "\(args): \(r.output)")
            #expect(r.stderr.contains("No space left on device"), "\(args): \(r.output)")
        }
    }

    @Test func exportDaysMistakesSayWhatIsAllowed() throws {
        let venue = try Self.replayed()
        defer { venue.dir.remove() }
        for days in ["0", "-1", "soon"] {
            let r = try venue.run(["export", "--days", days])
            #expect(r.status == 64)
            #expect(r.stderr.contains("--days \(days): expected a whole number of days ≥ 1, or all"), "\(r.output)")
        }
        let help = try ProcessRunner.venueBeacon(["help", "export"])
        #expect(!help.stdout.contains("   export.email"), "\(help.stdout)")
        #expect(!help.stdout.contains(" {3,}\\S"), "stray runs of spaces")
    }

    /// A damaged diary is found before anything is written; `diary check` reports it,
    /// `diary salvage` rescues what reads.
    @Test func aDamagedDiaryIsRefusedCheckedAndSalvaged() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        // 3,000 visits over many 512-byte pages.
        var text = "time,kind,payload,rssi\n"
        for phone in 0..<3000 {
            for step in 0..<3 { text += "\(1_763_805_600 + phone + step * 100),herald,\(String(format: "%08x", phone)),-60\n" }
        }
        let file = try venue.dir.write("s.csv", text)
        #expect(try venue.run(["diary", "replay", file]).status == 0)
        #expect(try venue.run(["diary", "check"]).stdout.contains("\(venue.diary): ok"))

        // Garbage over pages in the middle of the visit table, as a failing SD card leaves it.
        let handle = try #require(FileHandle(forUpdatingAtPath: venue.diary))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2 / 512 * 512)
        handle.write(Data((0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }))
        try handle.close()
        let damaged = try #require(FileManager.default.contents(atPath: venue.diary))

        let replay = try venue.run(["diary", "replay", file])
        #expect(replay.status == 65)
        #expect(replay.stderr.contains("the venue diary \(venue.diary) is damaged"), "\(replay.output)")
        #expect(replay.stderr.contains("venue-beacon diary salvage"))
        #expect(FileManager.default.contents(atPath: venue.diary) == damaged, "replay wrote into a damaged diary")

        let export = try venue.run(["export", "--days", "all"])
        #expect(export.status == 65)
        #expect(export.stdout.isEmpty, "an export of a damaged diary streamed \(export.stdout.count) bytes before failing")

        let check = try venue.run(["diary", "check"])
        #expect(check.status == 65)
        #expect(!check.stdout.contains(": ok"))

        let rescued = venue.dir.path("rescued.sqlite")
        let salvage = try venue.run(["diary", "salvage", rescued])
        #expect(salvage.status == 0, "\(salvage.output)")
        let copied = try #require(Int(salvage.stdout.split(separator: " ")[1]))
        #expect(copied > 2900 && copied < 3000, "\(salvage.stdout)")
        #expect(Self.mode(rescued) & 0o777 == 0o600)
        let rescuedVenue = try venue.dir.write("rescued.toml", try String(contentsOfFile: venue.config, encoding: .utf8)
            .replacingOccurrences(of: venue.diary, with: rescued))
        let rescuedCheck = try ProcessRunner.venueBeacon(["diary", "check", "--config", rescuedVenue])
        #expect(rescuedCheck.stdout.contains("ok"), "\(rescuedCheck.output)")
        let stats = try ProcessRunner.venueBeacon(["diary", "stats", "--json", "--config", rescuedVenue])
        #expect(stats.stdout.contains("\"visits\": \(copied),"), "\(stats.output)")
        #expect(FileManager.default.contents(atPath: venue.diary) == damaged, "salvage changed the damaged file")
    }

    /// A diary the user may read but not write (a copy on a write-protected stick): read-only
    /// commands work, as an unprivileged user.
    @Test func readOnlyCommandsReadADiaryTheUserCannotWrite() throws {
        let venue = try Self.replayed("share_days = \"all\"")
        defer { venue.dir.remove() }
        chmod(venue.dir.url.path, 0o755)
        chmod(venue.config, 0o644)
        chmod(venue.diary, 0o444)
        chmod(venue.dir.url.path, 0o555)
        defer { chmod(venue.dir.url.path, 0o755) }
        for args in [["diary", "stats"], ["export"]] {
            let r = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/sbin/runuser"), ["-u", "nobody", "--", ProcessRunner.venueBeacon.path] + args + ["--config", venue.config])
            #expect(r.status == 0, "\(args): \(r.output)")
            #expect(!r.stderr.contains("readonly database"), "\(r.output)")
        }
    }

    /// A sightings file is streamed: peak memory barely grows with the file (the old replay held
    /// the file, a copy and every parsed row: 815 MB for a 284 MB file).
    @Test func replayMemoryDoesNotGrowWithTheFile() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        func file(rows: Int, name: String) throws -> String {
            let path = venue.dir.path(name)
            var text = "time,kind,payload,rssi\n"
            text.reserveCapacity(rows * 150)
            let padding = String(repeating: "5a", count: 60)
            for i in 0..<rows { text += "\(1_763_805_600 + i / 20),advert,\(String(format: "%08x", i % 2000))\(padding),-60\n" }
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        func peakMegabytes(_ path: String) throws -> Double {
            let script = """
                import resource, subprocess, sys
                r = subprocess.run(sys.argv[1:], capture_output=True)
                if r.returncode != 0: sys.exit(r.stderr.decode())
                print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
                """
            let r = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["python3", "-c", script, ProcessRunner.venueBeacon.path, "diary", "replay", path, "--config", venue.config])
            return try #require(Double(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(r.output)")
        }
        let small = try peakMegabytes(try file(rows: 10_000, name: "small.csv"))
        let large = try peakMegabytes(try file(rows: 160_000, name: "large.csv"))
        // The large file is 23 MB more than the small one; holding it would cost three times that.
        #expect(large - small < 10, "peak \(small) MB for 1.5 MB of sightings, \(large) MB for 24 MB")
    }

    /// A full disk: the replay and the export say which file and that the disk is full, exit 74,
    /// and the diary stays a sound database. A 256 KiB tmpfs stands in for a full SD card.
    @Test func aFullDiskNamesTheFileAndExits74() throws {
        let venue = try Venue()
        defer { venue.dir.remove() }
        let small = venue.dir.path("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mounted = try ProcessRunner.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=256k", "tmpfs", small])
        try #require(mounted.status == 0, "mounting a tmpfs needs root, as CI runs: \(mounted.output)")
        defer { _ = try? ProcessRunner.run(URL(fileURLWithPath: "/bin/umount"), [small]) }
        let config = try venue.dir.write("full.toml", try String(contentsOfFile: venue.config, encoding: .utf8)
            .replacingOccurrences(of: venue.diary, with: small + "/diary.sqlite"))
        var text = "time,kind,payload,rssi\n"
        // 20,000 visits of 200 s: a few MB of diary.
        for phone in 0..<20_000 {
            for step in 0..<3 { text += "\(1_763_805_600 + phone + step * 100),herald,\(String(format: "%08x", phone))aabbccddeeff,-60\n" }
        }
        let file = try venue.dir.write("s.csv", text)
        let replay = try ProcessRunner.venueBeacon(["diary", "replay", file, "--config", config])
        #expect(replay.status == 74, "\(replay.output)")
        #expect(replay.stderr.contains("cannot write the venue diary \(small)/diary.sqlite: the disk is full"), "\(replay.output)")
        let export = try ProcessRunner.venueBeacon(["export", "--days", "all", "--output", small + "/export.csv", "--config", config])
        #expect([65, 66, 74].contains(export.status), "\(export.output)")
        #expect(!export.stderr.contains("NSCocoaErrorDomain"), "\(export.output)")
        try #require(FileManager.default.fileExists(atPath: small + "/diary.sqlite"))
        #expect(try DiaryCommandTests.Venue.integrityOK(small + "/diary.sqlite"))
    }

    /// A disk with no room for even a new file (no inodes left): still "disk full", exit 74 as
    /// documented, not 73 ("cannot create").
    @Test func noRoomForANewFileIsADiskFullToo() throws {
        let venue = try Self.replayed()
        defer { venue.dir.remove() }
        let full = venue.dir.path("full")
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        let mounted = try ProcessRunner.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=256k,nr_inodes=2", "tmpfs", full])
        try #require(mounted.status == 0, "mounting a tmpfs needs root, as CI runs: \(mounted.output)")
        defer { _ = try? ProcessRunner.run(URL(fileURLWithPath: "/bin/umount"), [full]) }
        // The root directory and one file use the two inodes.
        FileManager.default.createFile(atPath: full + "/filler", contents: Data())
        try #require(open(full + "/another", O_WRONLY | O_CREAT, 0o600) == -1 && errno == ENOSPC, "the tmpfs still had an inode")
        let export = try venue.run(["export", "--days", "all", "--output", full + "/export.csv"])
        #expect(export.status == 74, "\(export.output)")
        #expect(export.stderr.contains("No space left on device"), "\(export.output)")
    }
}
