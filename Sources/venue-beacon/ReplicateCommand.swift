import Appliance
import ArgumentParser
import Foundation
import VenueDiary

struct ReplicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Send the visits the venue hub has not acknowledged, once, and wait for its acknowledgement.",
        discussion: """
            One pass by hand of what the service does all the time when [replication] is set: \
            publishes every visit of the diary above the hub's last acknowledgement to the \
            venue's broker ([replication] broker, as [replication] node under its login), and \
            waits until the hub acknowledges them, after its own commit. A broker's receipt \
            counts for nothing. Safe to repeat: the hub keeps each visit once.

            Exit status: 0 when the hub acknowledged every visit; 75 when the timeout passed \
            first (the hub, the broker or the network is away: the visits stay in the diary and \
            go with the next pass or the service); 77 when the broker refused the visits (this \
            login may not publish as this node: see the venue's ACL); 78 for a config or login \
            error. See docs/venue.md.
            """)

    @OptionGroup var options: ConfigOptions

    @Option(help: ArgumentHelp("Seconds to wait for the hub's acknowledgement.", valueName: "seconds"))
    var timeout: Double = 60

    func validate() throws {
        guard timeout.isFinite, timeout >= 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be 0 to 86400 seconds")
        }
    }

    func run() throws {
        let settings = try options.load()
        guard let replication = settings.replication else {
            Console.error("\(options.path) has no [replication] section: this node does not replicate to a venue hub (see docs/venue.md)")
            throw ExitCode(ExitStatus.config)
        }
        let replicator: NodeReplicator
        do {
            let store = try reportingFailures(diary: settings.diary.path) { try DiaryStore(path: settings.diary.path) }
            replicator = try NodeReplicator(settings: replication, store: store)
        } catch let refusal as NodeReplicator.Refusal {
            Console.error("\(refusal)")
            throw ExitCode(ExitStatus.config)
        }
        let outcome = replicator.pass(timeout: timeout)
        let counts = "sent \(outcome.sent), acknowledged \(outcome.acknowledged), pending \(outcome.pending)"
        if let refusal = outcome.refusal {
            Console.error("\(refusal) (\(counts))")
            if case .login = refusal { throw ExitCode(ExitStatus.config) }
            throw ExitCode(ExitStatus.noPermission)
        }
        guard outcome.pending == 0 else {
            var why = ""
            if let unreachable = outcome.unreachable {
                why = ": the broker at \(replication.broker.host):\(replication.broker.port) cannot be reached (\(unreachable))"
            } else if outcome.noHubSubscribed {
                why = ": no hub has subscribed at the broker yet (start the hub: venue-beacon hub)"
            } else {
                why = ": the hub did not acknowledge in time (is it running?)"
            }
            Console.error("timed out after \(Int(timeout)) s\(why); \(counts). The visits stay in the diary and go with the next pass.")
            throw ExitCode(ExitStatus.tempFail)
        }
        Console.out("replicated to the hub as node \(replication.node): \(counts)")
    }
}
