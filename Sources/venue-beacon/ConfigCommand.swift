import Appliance
import ArgumentParser

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Work with the config file.",
        subcommands: [Check.self])

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
}
