import Appliance
import ArgumentParser

@main
struct VenueBeacon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "venue-beacon",
        abstract: "A Raspberry Pi venue beacon and venue check-in appliance.",
        version: ProductVersion.string,
        subcommands: [RunCommand.self, ConfigCommand.self, DiaryCommand.self, ExportCommand.self, IdentityCommand.self, OpenCommand.self, OutboxCommand.self, ExposureCommand.self, BTCommand.self, SimulateCommand.self, ReplicateCommand.self, HubCommand.self, DoctorCommand.self]
    )
}
