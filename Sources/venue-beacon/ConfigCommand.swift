import Appliance
import ArgumentParser
import Foundation
import Glibc

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Work with the config file.",
        subcommands: [Check.self, Import.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate the config file and print the effective settings.",
            discussion: """
                Runs exactly the validation the service runs at start. On success prints the \
                effective settings (defaults included) as TOML and exits 0; otherwise prints every \
                problem (file, key, the bad value, what is allowed) to stderr and exits 78.
                """)

        @OptionGroup var options: ConfigOptions

        func run() throws {
            let settings = try options.load()
            Console.out("# effective settings from \(options.path)\n")
            Console.out(settings.effectiveTOML)
            for note in settings.notes { Console.error("note: " + note) }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take the config (and the mail account) an installer put on the boot partition.",
            discussion: """
                Looks for venue-beacon.toml and venue-beacon-msmtprc in DIR (the FAT boot \
                partition any laptop can edit). The service runs this at every start, as root \
                (the unit's ExecStartPre=), before it reads its config.

                venue-beacon.toml is validated with exactly the rules of `config check`, staged \
                beside the config. Valid: it becomes the config (root, group venue-beacon, mode \
                0640), the config before it is kept as CONFIG.previous, the file is removed from \
                the card, and venue-beacon-applied.txt there says when and its SHA-256. Invalid: \
                nothing changes, the file stays, and venue-beacon-error.txt there lists every \
                problem as `config check` prints them. venue-beacon-msmtprc (an msmtp account \
                with host and from lines) is taken the same way as /etc/msmtprc.

                Exit status: 0 when everything on the card was applied, or nothing was there; \
                78 when a file was refused; 74 when the card could not be written (the receipt, \
                the error file, or removing an applied file). See docs/install.md.
                """)

        @OptionGroup var options: ConfigOptions

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The boot partition.", discussion: "Default: /boot/firmware, else /boot.", valueName: "dir"))
        var from: String?

        @Option(name: .long, help: ArgumentHelp("Where the mail account goes.", valueName: "path"))
        var msmtprc: String = ConfigImport.defaultMsmtprcPath

        @Flag(
            name: .customLong("status-file"),
            help: "Then write venue-beacon-status.txt there too, when it is a FAT partition (or named by --from): the doctor's checklist before the node starts (the unit does; venue-beacon-status.timer refreshes it).")
        var statusFile = false

        func run() async throws {
            let directory = from ?? BootPartition.directory()
            // Run as root (the service's start): the files go to the service's group. By hand
            // as another user: that user's own group.
            let importer = ConfigImport(
                bootDirectory: directory, configPath: options.path, msmtprcPath: msmtprc,
                group: geteuid() == 0 ? ConfigImport.serviceGroupID() : nil)
            let report = importer.run()
            // A plain Debian /boot (not FAT) holds kernels, not notes.
            if statusFile, from != nil || BootPartition.isFAT(directory) {
                // As root before the service starts: a checklist on the card at every start, also
                // where the service itself may not write there (docs/install.md).
                let doctor = Doctor(configPath: options.path, bootDirectory: directory)
                let checklist = await Task.detached { await doctor.run() }.value
                let outcome = StatusFile(directory: directory).write(
                    report: checklist, statusLine: "not started yet (this list was written as the service started, before the node ran)",
                    led: nil, writtenBy: "the service's start", force: true)
                if case .failed(let error) = outcome { Console.error("cannot write the status file: \(error)") }
            }
            if report.nothingToDo {
                Console.out("nothing to import: no \(BootPartition.configName) or \(BootPartition.msmtprcName) in \(directory)")
                return
            }
            for (outcome, name, target) in [
                (report.config, BootPartition.configName, options.path), (report.msmtprc, BootPartition.msmtprcName, msmtprc),
            ] {
                switch outcome {
                case .absent: break
                case .applied(_, let fingerprint, let previous):
                    Console.out(
                        "\(name): applied as \(target)" + (fingerprint.map { " (SHA-256 \($0))" } ?? "")
                            + (previous.map { "; the one before is kept as \($0)" } ?? "") + "; removed from \(directory)")
                case .refused(let problems):
                    Console.error("\(name) is not valid; nothing of it was applied, the errors are in \(directory)/\(BootPartition.errorName):\n" + problems.joined(separator: "\n"))
                }
            }
            for problem in report.cardProblems { Console.error(problem) }
            if report.refused { throw ExitCode(ExitStatus.config) }
            if !report.cardProblems.isEmpty { throw ExitCode(ExitStatus.ioError) }
        }
    }
}
