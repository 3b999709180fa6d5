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
            at once). Run it as root (sudo) to see what the service sees. The running service \
            writes the same checklist to venue-beacon-status.txt on the boot partition.

            Exit status: 0 when nothing is ✗, 1 otherwise (75 when --send-test's email was not \
            taken). See docs/install.md.
            """)

    @OptionGroup var options: ConfigOptions

    @Flag(name: .long, help: "Print one JSON object.") var json = false

    @Flag(name: .customLong("send-test"), help: "Also send a short test email to export.email (no visit data).")
    var sendTest = false

    @Option(name: .long, help: ArgumentHelp("The boot partition.", discussion: "Default: /boot/firmware, else /boot.", valueName: "dir"))
    var boot: String?

    func run() async throws {
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
}
