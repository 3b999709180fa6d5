import Foundation
import Testing

/// `image/build-deb` and the pi-gen stage, as far as an x86_64 machine can check them: the
/// package is built from the debug binary (`--binary`, `--fast`: a release build takes
/// minutes), then taken apart with dpkg-deb, its maintainer scripts run against stubbed system
/// commands, and lintian and shellcheck run over it all.
@Suite(.serialized) struct PackagingTests {
    static let root = ProcessRunner.repositoryRoot
    static let scripts = [
        "image/build-deb", "image/debian/postinst", "image/debian/prerm", "image/debian/postrm",
        "image/pi-gen/stage-venue/prerun.sh", "image/pi-gen/stage-venue/00-venue/01-run.sh",
        "scripts/system-test", "image/system-test/vbtest-entry", "image/system-test/guest/air", "image/system-test/guest/gpio-chip",
        "scripts/arm64-test", "image/trixie/build-root", "image/trixie/in-root", "image/trixie/swift60-compat",
        "image/trixie/build-in-root", "image/trixie/test-in-root",
    ]

    static func run(_ program: String, _ args: [String], environment: [String: String]? = nil) throws -> ProcessRunner.Result {
        try ProcessRunner.run(URL(fileURLWithPath: program), args, environment: environment, currentDirectory: root, timeout: .seconds(300))
    }

    /// Builds the package once per test into `dir`; returns its path.
    static func buildDeb(into dir: TemporaryDirectory) throws -> String {
        let result = try run(root.appendingPathComponent("image/build-deb").path, [
            "--binary", ProcessRunner.venueBeacon.path, "--fast", "--output", dir.path("out"),
        ])
        guard result.status == 0 else { throw SMTPSink.SinkError(reason: "build-deb failed: \(result.output)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func packageContentsControlAndConffile() throws {
        let dir = try TemporaryDirectory("deb")
        defer { dir.remove() }
        let deb = try Self.buildDeb(into: dir)
        let arch = try Self.run("/usr/bin/dpkg", ["--print-architecture"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let version = try ProcessRunner.venueBeacon(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb == dir.path("out/venue-beacon_\(version)_\(arch).deb"))

        let listing = try Self.run("/usr/bin/dpkg-deb", ["-c", deb]).stdout
        func entry(_ path: String) -> String? {
            listing.split(separator: "\n").first { $0.hasSuffix(" ./" + path) }.map { String($0.prefix(10)) }
        }
        #expect(entry("usr/bin/venue-beacon") == "-rwxr-xr-x")
        #expect(entry("usr/lib/systemd/system/venue-beacon.service") == "-rw-r--r--")
        // The status file on the boot partition, refreshed as root by a timer.
        #expect(entry("usr/lib/systemd/system/venue-beacon-status.service") == "-rw-r--r--")
        #expect(entry("usr/lib/systemd/system/venue-beacon-status.timer") == "-rw-r--r--")
        #expect(entry("etc/venue-beacon/venue-beacon.toml") == "-rw-r--r--")
        #expect(entry("usr/lib/udev/rules.d/60-venue-beacon-gpio.rules") == "-rw-r--r--")  // GPIO for group gpio
        #expect(entry("usr/share/doc/venue-beacon/copyright") != nil)
        #expect(entry("usr/share/doc/venue-beacon/appliance.md") != nil)
        #expect(entry("usr/share/doc/venue-beacon/install.md") != nil)
        // The venue hub: its unit (never enabled by the package), its docs and configs to copy.
        #expect(entry("usr/lib/systemd/system/venue-beacon-hub.service") == "-rw-r--r--")
        #expect(entry("usr/share/doc/venue-beacon/venue.md") != nil)
        #expect(entry("usr/share/doc/venue-beacon/venue-hub.toml.example") != nil)
        #expect(entry("usr/share/doc/venue-beacon/mosquitto/venue-beacon.acl") != nil)
        #expect(entry("usr/share/man/man1/venue-beacon.1.gz") != nil)
        #expect(!listing.contains("./var/"))  // state is made by postinst and systemd, never shipped

        let info = try Self.run("/usr/bin/dpkg-deb", ["-I", deb]).stdout
        #expect(info.contains(" Package: venue-beacon\n"))
        #expect(info.contains(" Version: \(version)\n"))
        #expect(info.contains(" Architecture: \(arch)\n"))
        for dependency in ["adduser", "libgpiod2", "libsqlite3-0", "libbluetooth3", "libc6"] {
            #expect(info.contains(dependency), "Depends lacks \(dependency)")
        }
        #expect(info.contains(" Recommends: msmtp-mta"))

        let tree = dir.path("tree")
        #expect(try Self.run("/usr/bin/dpkg-deb", ["-R", deb, tree]).status == 0)
        #expect(try String(contentsOfFile: tree + "/DEBIAN/conffiles", encoding: .utf8) == "/etc/venue-beacon/venue-beacon.toml\n")
        #expect(FileManager.default.contents(atPath: tree + "/usr/lib/systemd/system/venue-beacon.service")
            == FileManager.default.contents(atPath: Self.root.appendingPathComponent("systemd/venue-beacon.service").path))

        // The shipped config refuses to run until the venue is named, and nothing else is wrong with it.
        let shipped = tree + "/etc/venue-beacon/venue-beacon.toml"
        let check = try ProcessRunner.venueBeacon(["config", "check", "--config", shipped])
        #expect(check.status == 78)
        for key in ["venue.country", "venue.state", "venue.code", "venue.name"] {
            #expect(check.stderr.contains("\(key): is required"), "\(check.output)")
        }
        let filledIn = try String(contentsOfFile: shipped, encoding: .utf8)
            .replacingOccurrences(of: "# country = ", with: "country = ").replacingOccurrences(of: "# state = ", with: "state = ")
            .replacingOccurrences(of: "# code = ", with: "code = ").replacingOccurrences(of: "# name = ", with: "name = ")
        let edited = try dir.write("edited.toml", filledIn)
        let ok = try ProcessRunner.venueBeacon(["config", "check", "--config", edited])
        #expect(ok.status == 0, "\(ok.output)")
    }

    /// The maintainer scripts with every system command stubbed to log its arguments.
    @Test func maintainerScriptsCreateTheUserEnableAndPurge() throws {
        let dir = try TemporaryDirectory("debscripts")
        defer { dir.remove() }
        let log = dir.path("log")
        let stubs = dir.path("stubs")
        try FileManager.default.createDirectory(atPath: stubs, withIntermediateDirectories: true)
        for command in ["getent", "addgroup", "adduser", "install", "deb-systemd-helper", "deb-systemd-invoke", "systemctl", "rm"] {
            // getent finds nobody (a fresh system); every other command succeeds.
            writeExecutable(dir.path("stubs/\(command)"), "#!/bin/sh\necho \"\(command) $*\" >> \(log)\n" + (command == "getent" ? "exit 2\n" : "exit 0\n"))
        }
        let environment = ["PATH": stubs + ":/usr/bin:/bin"]
        func script(_ name: String, _ args: [String]) throws -> [String] {
            try? FileManager.default.removeItem(atPath: log)
            let result = try Self.run("/bin/sh", [Self.root.appendingPathComponent("image/debian/" + name).path] + args, environment: environment)
            #expect(result.status == 0, "\(name) \(args): \(result.output)")
            return ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        let systemdRunning = FileManager.default.fileExists(atPath: "/run/systemd/system")

        let install = try script("postinst", ["configure", ""])
        #expect(install.contains("addgroup --system gpio"))
        #expect(install.contains("adduser --system --group --home /var/lib/venue-beacon --no-create-home --gecos venue-beacon service venue-beacon"))
        #expect(install.contains("install -d -o venue-beacon -g venue-beacon -m 0700 /var/lib/venue-beacon"))
        #expect(install.contains("deb-systemd-helper enable venue-beacon.service"))
        #expect(install.contains("deb-systemd-helper enable venue-beacon-status.timer"))
        #expect(install.contains("deb-systemd-invoke start venue-beacon-status.timer") == systemdRunning)
        // Started only when systemd runs; in an image chroot (or here) never.
        #expect(install.contains("deb-systemd-invoke start venue-beacon.service") == systemdRunning)

        let upgrade = try script("postinst", ["configure", "0.0.9"])
        #expect(upgrade.contains("deb-systemd-invoke restart venue-beacon.service") == systemdRunning)
        #expect(upgrade.contains("deb-systemd-invoke try-restart venue-beacon-hub.service") == systemdRunning)
        #expect(!upgrade.contains { $0.hasPrefix("deb-systemd-invoke start") })

        let remove = try script("prerm", ["remove"])
        #expect(remove.contains("deb-systemd-invoke stop venue-beacon.service") == systemdRunning)
        #expect(remove.contains("deb-systemd-invoke stop venue-beacon-status.timer venue-beacon-status.service") == systemdRunning)
        let removed = try script("postrm", ["remove"])
        #expect(removed.contains("deb-systemd-helper mask venue-beacon.service"))
        #expect(removed.contains("deb-systemd-helper mask venue-beacon-status.timer"))
        #expect(!(try script("postrm", ["remove"])).contains { $0.hasPrefix("rm ") })  // remove keeps the diary

        let purge = try script("postrm", ["purge"])
        #expect(purge.contains("deb-systemd-helper purge venue-beacon.service"))
        #expect(purge.contains("deb-systemd-helper purge venue-beacon-status.timer"))
        #expect(purge.contains("rm -rf /var/lib/venue-beacon /var/lib/private/venue-beacon"))
    }

    /// lintian's verdict. The only tag allowed comes from packaging the debug binary, whose
    /// RUNPATH points at the toolchain's Swift runtime; the release build links it statically.
    @Test func lintianHasNothingElseToSay() throws {
        let dir = try TemporaryDirectory("lintian")
        defer { dir.remove() }
        let deb = try Self.buildDeb(into: dir)
        let result = try Self.run("/usr/bin/lintian", ["--no-tag-display-limit", deb])
        let tags = result.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") || $0.hasPrefix("I:") }
        for tag in tags {
            let fromDebugBinary = tag.contains("custom-library-search-path") && tag.contains("/swift/")
            #expect(fromDebugBinary, "unexpected lintian tag: \(tag)")
        }
    }

    @Test func everyScriptPassesShellcheck() throws {
        let result = try Self.run("/usr/bin/shellcheck", Self.scripts)
        #expect(result.status == 0, "\(result.output)")
        let export = try Self.run("/usr/bin/shellcheck", ["-s", "bash", "image/pi-gen/stage-venue/EXPORT_IMAGE"])
        #expect(export.status == 0, "\(export.output)")
        for script in Self.scripts {
            #expect(FileManager.default.isExecutableFile(atPath: Self.root.appendingPathComponent(script).path), "\(script) is not executable")
        }
    }

    @Test func piGenStageHasTheExpectedShape() throws {
        let stage = Self.root.appendingPathComponent("image/pi-gen/stage-venue")
        let packages = try String(contentsOf: stage.appendingPathComponent("00-venue/00-packages"), encoding: .utf8)
        #expect(packages.split(separator: "\n").map(String.init) == ["msmtp", "msmtp-mta", "ca-certificates"])
        let run = try String(contentsOf: stage.appendingPathComponent("00-venue/01-run.sh"), encoding: .utf8)
        #expect(run.contains("systemctl mask bluetooth.service"))
        #expect(run.contains("systemctl enable venue-beacon.service venue-beacon-status.timer"))
        #expect(run.contains("apt-get install -y --no-install-recommends /tmp/venue-beacon.deb"))
        let journald = try String(contentsOf: stage.appendingPathComponent("00-venue/files/journald-volatile.conf"), encoding: .utf8)
        #expect(journald.contains("[Journal]\nStorage=volatile\n"))
        let export = try String(contentsOf: stage.appendingPathComponent("EXPORT_IMAGE"), encoding: .utf8)
        #expect(export.contains("IMG_SUFFIX=\"-venue\""))
    }
}
