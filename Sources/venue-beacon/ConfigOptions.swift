import Appliance
import ArgumentParser
import Foundation

/// `--config`, shared by every subcommand that reads the config file.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The config file.",
            discussion: "Default: $VENUE_BEACON_CONFIG, else /etc/venue-beacon/venue-beacon.toml.",
            valueName: "path"))
    var config: String?

    var path: String { Settings.resolvePath(explicit: config) }

    /// Loads and validates the settings, or prints every problem and exits with EX_CONFIG (78),
    /// having written nothing.
    func load() throws -> Settings {
        do {
            return try Settings.load(path: path)
        } catch {
            Console.error("configuration is not valid:\n" + error.description)
            throw ExitCode(78)
        }
    }
}

/// Writes to the standard streams without the C globals Swift 6 rejects.
enum Console {
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("venue-beacon: " + text + (text.hasSuffix("\n") ? "" : "\n")).utf8))
    }
}
