import Appliance
import ArgumentParser
import Foundation
import Glibc
import Logging
import VenueDiary

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the venue node: advertise the venue, detect phones, record visits (the service).",
        discussion: """
            Advertises the venue as a Herald venue beacon (service 0xFCF6, the [venue] payload on \
            the GATT payload characteristic), scans for phones, reads their payloads, takes their \
            signal writes, and records visits in the diary. Runs until SIGTERM or SIGINT, then \
            closes the diary; visits still open continue at the next start. When the controller \
            is missing or fails it is reopened with backoff, and the log says so. SIGHUP does not \
            reload the configuration (restart instead); SIGUSR1 exports and delivers the diary.

            Logs go to standard error at [logging] level: start, Bluetooth state changes, \
            check-ins and check-outs with a short payload id, errors; nothing per advert. See \
            docs/node.md.
            """)

    @OptionGroup var options: ConfigOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The boot partition, where a refused config is looked for (the status LED shows it).",
            discussion: "Default: the boot partition (/boot/firmware, else /boot) when systemd runs the service and it is FAT; otherwise none. An empty value: none.",
            valueName: "dir"))
    var boot: String?

    /// The boot partition the installer reads: given, or the Pi's when systemd started us.
    var bootDirectory: String? {
        if let boot { return boot.isEmpty ? nil : boot }
        return ProcessInfo.processInfo.environment["INVOCATION_ID"] == nil ? nil : BootPartition.statusDirectory()
    }

    func run() async throws {
        let settings: Settings
        do {
            settings = try options.load()
        } catch {
            // Refused here and on the card: the status LED says so until the service is stopped.
            if let boot = bootDirectory, let gpio = ConfigErrorHold.gpio(cardRefused: BootPartition.importRefused(in: boot), configPath: options.path),
                await ConfigErrorHold.hold(gpio: gpio, status: ConfigErrorHold.statusLine(bootDirectory: boot), logger: Logger(label: "venue-beacon", factory: { StreamLogHandler.standardError(label: $0) }))
            {
                return
            }
            throw error
        }
        let level = Logger.Level(rawValue: settings.logging.level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "venue-beacon")
        for note in settings.notes { logger.notice("\(note)") }
        // The appliance edge: systemd notify and watchdog, LEDs and the button, exports from
        // SIGUSR1 and the button, outbox retries, clock sync, opening hours.
        // Exports (button, SIGUSR1) have the service write its diary first.
        let flusher = DiaryFlusher()
        // The installer's view (docs/install.md): a refused config on the card on the status LED.
        let edge = await ApplianceEdge.start(settings: settings, logger: logger, diaryFlusher: flusher, bootDirectory: bootDirectory)
        defer { edge.shutdown() }
        do {
            _ = try await withThrowingTaskGroup(of: NodeService.Exit?.self) { group in
                group.addTask {
                    await edge.run()
                    return nil
                }
                group.addTask { try await NodeService(settings: settings, hooks: edge.hooks, logger: logger, diaryFlusher: flusher).run() }
                defer { group.cancelAll() }
                // The service decides when to stop; the edge runs until then.
                while let finished = try await group.next() {
                    if let exit = finished { return exit }
                }
                return NodeService.Exit.cancelled
            }
        } catch let error as DiaryError {
            logger.critical("\(error)")
            if error.isPermanent {
                // Restarting cannot mend it: stay up showing the fault instead of a restart loop
                // that leaves the LEDs dark.
                logger.critical("not recording until the diary is replaced; the status LED shows a fault. Stop the service to repair it.")
                await edge.holdFault(error.description)
            }
            throw ExitCode(ExitStatus.dataError)
        } catch {
            logger.critical("cannot run: \(error)")
            throw ExitCode(ExitStatus.software)
        }
    }
}
