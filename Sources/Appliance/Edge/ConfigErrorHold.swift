import Foundation
import Glibc
import Logging

/// `run` when its config is refused and so was the installer's config on the card (a fresh
/// install: the package's config has no venue yet, and the card's file has a mistake). Exiting 78
/// would leave the LEDs dark and the card's error file the only sign; instead the service stays
/// up showing the config-error code on the status LED (2 flashes, pause), wired as the refused
/// config's own `[gpio]` section says, tells systemd why (`READY=1`, the reason as `STATUS=`, the
/// watchdog fed) and waits to be stopped. A fixed file on the card is imported at the next start.
public enum ConfigErrorHold {
    /// The GPIO settings to show the code with; nil: exit 78 as for any refused config. Only
    /// after the card's config was refused (an installer is looking at the LED; a config edited
    /// on the node is `config check`'s and the journal's business), and only with a status LED
    /// that `[gpio]` of the config (`configText`, valid in that section whatever else is wrong)
    /// enables.
    public static func gpio(cardRefused: Bool, configText: String?, file: String) -> GPIOSettings? {
        guard cardRefused, let configText, let gpio = GPIOSettings.lenient(configText, file: file), gpio.enabled, gpio.statusLED != nil
        else { return nil }
        return gpio
    }

    /// ``gpio(cardRefused:configText:file:)`` for the config file at `path`.
    public static func gpio(cardRefused: Bool, configPath path: String) -> GPIOSettings? {
        guard cardRefused else { return nil }
        return gpio(cardRefused: true, configText: try? Settings.readText(path: path, example: ""), file: path)
    }

    /// The `STATUS=` line while held.
    public static func statusLine(bootDirectory: String) -> String {
        "not recording: the config is not valid and \(bootDirectory)/\(BootPartition.configName) was refused (\(BootPartition.errorName) there says why); the status LED shows the config error"
    }

    /// Shows the code until SIGTERM or SIGINT (`signals` replaces the process's: tests), then
    /// turns the LEDs off. Returns false, having shown nothing, when the GPIO chip or line cannot
    /// be opened (the caller exits 78 as before).
    public static func hold(
        gpio: GPIOSettings, status: String, logger: Logger, backend: any GPIOBackend = GPIOBackendSystem(),
        environment: [String: String] = ProcessInfo.processInfo.environment, signals: AsyncStream<ServiceSignal>? = nil
    ) async -> Bool {
        let panel: GPIOPanel
        do {
            panel = try await GPIOPanel.start(settings: gpio, backend: backend)
        } catch {
            logger.error("the status LED cannot show the config error: \(error)")
            return false
        }
        panel.setStatus(.configError)
        let notifier = SystemdNotifier(environment: environment)
        let watchdog = SystemdNotifier.watchdogInterval(environment: environment) ?? .seconds(10)
        @Sendable func notify(_ assignments: [String]) {
            do { try notifier?.send(assignments) } catch { logger.warning("\(error)") }
        }
        notify(["READY=1", "STATUS=" + status])
        logger.critical("\(status); stop the service, fix the card's file and start it again")
        let signals = signals ?? ServiceSignals.stream()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals {
                    if case .terminate = signal { return }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    if notifier != nil { notify(["WATCHDOG=1"]) }
                    try? await Task.sleep(for: watchdog)
                }
            }
            await group.next()
            group.cancelAll()
        }
        notify(["STOPPING=1"])
        panel.stop()
        return true
    }
}
