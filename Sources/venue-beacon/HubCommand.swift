import Appliance
import ArgumentParser
import BLETransport
import Foundation
import Replication
import VenueDiary

struct HubCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub",
        abstract: "The venue hub: one diary for the venue from every node's visits (docs/venue.md).",
        subcommands: [HubServeCommand.self, HubStatusCommand.self],
        defaultSubcommand: HubServeCommand.self)
}

/// Loads a hub's config, or prints every problem and exits 78.
func loadHubConfig(_ options: ConfigOptions) throws -> HubConfig {
    do {
        return try HubConfig.load(path: options.path)
    } catch {
        Console.error("configuration is not valid:\n" + error.description)
        throw ExitCode(ExitStatus.config)
    }
}

struct HubServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the venue hub (the venue-beacon-hub service; the default).",
        discussion: """
            Subscribes at the venue's broker ([hub] broker, login [hub] username) to every \
            node's visits, commits them to the hub's store ([hub] store), and then acknowledges \
            them to the node, which resends anything unacknowledged. Keeps [diary] \
            recording_days on the store, retries the outbox's emails, and runs [export] schedule \
            (the venue-wide export, delivered to every configured target, on a synchronised \
            clock). Runs until SIGTERM or SIGINT; tells systemd READY once subscribed \
            (Type=notify). `venue-beacon export --config HUB` exports the whole venue by hand.
            """)

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let config = try loadHubConfig(options)
        let store = try reportingFailures(diary: config.hub.store) { try HubStore(path: config.hub.store) }
        let password: String?
        do {
            password = try config.hub.password()
        } catch {
            Console.error("[hub] password_file: \(error)")
            throw ExitCode(ExitStatus.config)
        }
        let stop = StopRequest()
        let notifier = SystemdNotifier()
        // Outbox retries and the schedule beside the hub's own thread, which owns its session.
        let housekeeping = Task { await HubHousekeeping(config: config) { Console.error($0) }.run() }
        defer { housekeeping.cancel() }
        let refusal: NodeReplicator.Refusal?
        do {
            refusal = try await DedicatedThread.run(name: "hub") { () throws -> NodeReplicator.Refusal? in
                let hub = try HubService(
                    store: store, broker: config.hub.broker, username: config.hub.username, password: password,
                    caFile: config.hub.caFile, recordingDays: config.diary.recordingDays, log: { Console.error($0) })
                return hub.run(until: { stop.requested }) {
                    Console.error("hub: subscribed at \(config.hub.broker.host):\(config.hub.broker.port); store \(config.hub.store)")
                    try? notifier?.ready(status: "taking visits")
                }
            }
        } catch {
            Console.error("\(error)")
            throw ExitCode(ExitStatus.config)
        }
        if let refusal {
            Console.error("\(refusal)")
            throw ExitCode(ExitStatus.config)
        }
    }
}

struct HubStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each node as the hub sees it.",
        discussion: """
            Per node: when it was last heard, whether it is online (its last will says when it \
            went away), whether its clock is synchronised, the visits the hub holds from it, the \
            change it is acknowledged up to, and its offline periods within the share window.
            """)

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try loadHubConfig(options)
        let now = Date().timeIntervalSince1970
        let window = (try? DiaryExport.window(config.diary.shareDays.map { .days($0) } ?? .all, now: now)) ?? .all
        guard FileManager.default.fileExists(atPath: config.hub.store) else {
            Console.error("\(config.hub.store) does not exist: the hub has not run yet ([hub] store)")
            throw ExitCode(ExitStatus.noInput)
        }
        let nodes = try reportingFailures(diary: config.hub.store) {
            try HubStore(path: config.hub.store).status(now: now, window: window)
        }
        guard !nodes.isEmpty else {
            Console.out("no node has replicated to this hub yet")
            return
        }
        for node in nodes { Console.out(Self.summary(node, now: now)) }
    }
}

extension HubStatusCommand {
    /// One node in a line: `hall: online, clock synchronised, last seen … (3 min ago), 120 visits,
    /// acknowledged up to change 480; offline 2026-11-27T08:00:00Z to 2026-11-27T09:10:00Z`.
    static func summary(_ node: HubNodeStatus, now: Double) -> String {
        var parts = [node.online ? "online" : "offline"]
        switch node.clockSynchronised {
        case true?: parts.append("clock synchronised")
        case false?: parts.append("clock NOT synchronised (its visits are marked clock_uncorrected)")
        case nil: parts.append("clock unknown")
        }
        if let lastSeen = node.lastSeen {
            parts.append("last seen \(TimeText.iso8601(lastSeen)) (\(Int(max(0, now - lastSeen)) / 60) min ago)")
        } else {
            parts.append("never seen")
        }
        parts.append("\(node.visits) visits")
        parts.append(node.acked.map { "acknowledged up to change \($0)" } ?? "nothing acknowledged")
        if node.diaries.count > 1 { parts.append("\(node.diaries.count) diaries (its card was replaced)") }
        var line = "\(node.name): " + parts.joined(separator: ", ")
        if !node.gaps.isEmpty {
            let gaps = node.gaps.map { gap in
                "\(TimeText.iso8601(gap.start)) to \(gap.isOpen ? "now" : TimeText.iso8601(gap.end))"
            }
            line += "; offline " + gaps.joined(separator: ", ")
        }
        return line
    }
}

/// Set by SIGTERM or SIGINT: the hub stops at its next turn.
final class StopRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    private var sources: [DispatchSourceSignal] = []

    init() {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.set() }
            source.resume()
            sources.append(source)
        }
    }

    private func set() {
        lock.lock()
        flag = true
        lock.unlock()
    }

    var requested: Bool {
        lock.lock()
        defer { lock.unlock() }
        return flag
    }
}
