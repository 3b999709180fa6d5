import Appliance
import ArgumentParser
import Foundation

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what an installer must get right: Bluetooth, GPIO, the clock, the diary, delivery, the hub.",
        discussion: """
            One checklist, each line ✓ (works), ✗ (will not work until fixed, with the fix) or – \
            (not checked here, and why): the config and the boot partition's import, rfkill, the \
            controller ([bluetooth] device, by address if so configured), bluetoothd, GPIO (the \
            chip reachable by the service's groups), the clock (synchronised, since when, the \
            source), the diary (writable; free space for recording_days at the rate it has \
            grown), email (recipients, sealing, the sendmail program, the msmtp account readable \
            by the service), the USB directory, the outbox, opening hours, and the venue hub's \
            broker when [replication] is set.

            It only reads: nothing changes unless --send-test is given, which hands a short test \
            email with no visit data to sendmail, as exports are (not queued: a failure is said \
            at once). Run it as root (sudo) to see what the service sees.

            --status-file writes the checklist, with what systemd says of venue-beacon.service \
            (its status line, or why it does not run), to venue-beacon-status.txt on the boot \
            partition instead of printing it: atomically, and only when something but the time \
            changed or the file is an hour old, to spare the card. venue-beacon-status.timer \
            runs it as root every 5 minutes; without a FAT boot partition it does nothing.

            Exit status: 0 when nothing is ✗, 1 otherwise (75 when --send-test's email was not \
            taken). With --status-file: 0 when the file was written or left unchanged, 74 when \
            it could not be written. See docs/install.md.
            """)

    @OptionGroup var options: ConfigOptions

    @Flag(name: .long, help: "Print one JSON object.") var json = false

    @Flag(name: .customLong("send-test"), help: "Also send a short test email to export.email (no visit data).")
    var sendTest = false

    @Flag(name: .customLong("status-file"), help: "Write venue-beacon-status.txt on the boot partition instead of printing (the timer does).")
    var statusFile = false

    @Option(name: .long, help: ArgumentHelp("The boot partition.", discussion: "Default: /boot/firmware, else /boot.", valueName: "dir"))
    var boot: String?

    func validate() throws {
        if statusFile, json || sendTest { throw ValidationError("--status-file writes the file; it takes neither --json nor --send-test") }
    }

    func run() async throws {
        if statusFile { return try await writeStatusFile() }
        let doctor = Doctor(configPath: options.path, bootDirectory: boot ?? BootPartition.directory())
        let report = await Task.detached { await doctor.run() }.value
        Console.out(json ? report.json : report.text)
        if sendTest {
            let settings = try options.load()
            if let problem = await Task.detached(operation: { TestEmail.send(settings: settings) }).value {
                Console.error("the test email was not sent: \(problem)")
                throw ExitCode(ExitStatus.tempFail)
            }
            Console.error("test email handed to \(settings.export.sendmail) for \(settings.export.recipients.joined(separator: ", "))")
        }
        if !report.passed { throw ExitCode(1) }
    }

    /// `--status-file`: named by --boot, else the boot partition when it is FAT (a plain Debian
    /// /boot holds kernels, not notes): nothing to do without one.
    private func writeStatusFile() async throws {
        guard let directory = boot ?? BootPartition.statusDirectory() else { return }
        let doctor = Doctor(configPath: options.path, bootDirectory: directory)
        let report = await Task.detached { await doctor.run() }.value
        let state = await Task.detached { ServiceState.read() }.value
        let outcome = StatusFile(directory: directory).write(
            report: report, statusLine: state?.statusLine ?? ServiceState.unknown, led: state?.led, writtenBy: "the status refresh (venue-beacon doctor --status-file)")
        switch outcome {
        case .written: Console.out("wrote \(directory)/\(BootPartition.statusName)")
        case .unchanged: break
        case .failed(let error):
            Console.error("cannot write the status file: \(error)")
            throw ExitCode(ExitStatus.ioError)
        }
    }
}
