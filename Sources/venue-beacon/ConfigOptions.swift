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

/// Writes to the standard streams without the C globals Swift 6 rejects. A stream that cannot
/// be written (`> /dev/full`, a closed terminal) ends the command with EX_IOERR (74) and a line
/// on standard error, instead of the abort `FileHandle.write` would give.
enum Console {
    static func out(_ text: String) {
        write(text.hasSuffix("\n") ? text : text + "\n", to: STDOUT_FILENO, name: "standard output")
    }

    static func error(_ text: String) {
        write("venue-beacon: " + text + (text.hasSuffix("\n") ? "" : "\n"), to: STDERR_FILENO, name: "standard error")
    }

    /// Raw text on standard error (a progress line), without the program's name.
    static func status(_ text: String) {
        write(text, to: STDERR_FILENO, name: "standard error")
    }

    private static func write(_ text: String, to fd: Int32, name: String) {
        do {
            try FileDescriptor.writeAll(fd, Array(text.utf8), path: name)
        } catch {
            if fd != STDERR_FILENO { Console.error("\(error)") }
            exit(ExitStatus.ioError)
        }
    }
}
