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

    /// Messages quote what files hold (a bad row, a path): control characters in them are
    /// shown escaped, never sent to the terminal, where an ESC would drive it.
    static func error(_ text: String) {
        write("venue-beacon: " + escapingControls(text) + (text.hasSuffix("\n") ? "" : "\n"), to: STDERR_FILENO, name: "standard error")
    }

    /// `text` with C0 and C1 control characters and DEL, line feeds and tabs aside, as `\u{1B}`.
    static func escapingControls(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
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
