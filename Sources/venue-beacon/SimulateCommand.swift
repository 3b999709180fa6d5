import Appliance
import ArgumentParser
import Foundation
import Herald
import Simulation
import VenueDiary
import VenueNode

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the venue node on a simulated venue of virtual phones and judge its diary against the truth.",
        discussion: """
            Generates a venue from the seed (visitors arriving over the opening hours, walk-pasts, \
            Herald Android phones, iPhones in the foreground and background, Android phones that \
            can only write, GAEN phones, Apple accessories and other devices), runs the node (host, \
            Herald policy, diary) on a simulated air with path-loss RSSI and 10 % advert loss, and \
            writes simulated-diary.sqlite and simulated-export.csv into --data-dir. It ends with the \
            efficacy report: visit recall and precision, split visits, phantom visits, walk-pasts \
            recorded, check-in and check-out error. With --json the report is also one JSON object \
            on the last line of standard output (and in efficacy.json). A seed repeats a run exactly.

            Without --config the node runs with the defaults of `venue-beacon run` for a venue named \
            "Simulated Venue". With --config it runs as that file sets it up: the venue's beacon, \
            [bluetooth] radio settings and link cap, [herald] policy and the diary's limits (its check-in \
            and check-out limits also define a true visit). The file's diary, opening hours, \
            LEDs and delivery are not used: the simulation never touches the venue's own diary.
            """)

    /// The most visitors: what a run needs grows a little faster than their number (about
    /// n^1.3: more phones present at once), and 5,000 take about 2 minutes of CPU in one hour,
    /// 4 over 24 hours, in a release build on a 2-core VM (BENCHMARKS.md); 100,000 would take
    /// over an hour.
    static let maximumVisitors = 5_000

    @Option(
        name: .long,
        help: ArgumentHelp(
            "People who come in, 1 to \(maximumVisitors).",
            discussion: "At the most, a run takes minutes: 5000 visitors about 2 minutes of CPU in one hour, 4 over 24 hours (release build, 2-core VM)."))
    var visitors: Int = 100
    @Option(name: .long, help: "Opening hours of the venue.") var hours: Double = 3
    @Option(name: .long, help: "Fixes the venue and the radio noise.") var seed: UInt64 = 1
    @Option(name: .long, help: ArgumentHelp("Virtual seconds per wall second, or max.", valueName: "x|max")) var speed: String = "max"
    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Where the diary and the export go.", valueName: "dir"))
    var dataDirectory: String = "./venue-data"
    @Flag(name: .long, help: "End with the report as one JSON object on the last line of standard output.") var json = false
    @Option(name: .long, help: SimulateCommand.daysHelp) var days: Int?
    @Flag(name: .long, help: SimulateCommand.faultsHelp) var faults = false
    @Option(
        name: .customLong("herald-logs"),
        help: ArgumentHelp(
            "Also write Herald-format logs (contacts.csv, detection.csv, statistics.csv) into this directory.",
            discussion: """
                The same logs `venue-beacon run` writes with [herald] log_directory, for Herald's analysis scripts, \
                within the same budget ([herald] log_budget_mb: its default, or the --config file's). Rows that \
                cannot be written are dropped and counted: the run says so once, reports the count, and exits 74.
                """,
            valueName: "dir"))
    var heraldLogs: String?
    @Option(
        name: .long,
        help: ArgumentHelp("Simulate the node this config file sets up (default: the built-in defaults).", valueName: "path"))
    var config: String?

    func validate() throws {
        guard (1...Self.maximumVisitors).contains(visitors) else {
            throw ValidationError("--visitors \(visitors): expected 1 to \(Self.maximumVisitors)")
        }
        guard hours > 0, hours <= 24 else { throw ValidationError("--hours \(hours): expected more than 0 and at most 24") }
        guard Pacing(speed) != nil else {
            throw ValidationError("--speed \(speed): expected max or a number from \(Pacing.speeds.lowerBound) to \(Int(Pacing.speeds.upperBound)) (virtual seconds per wall second)")
        }
        if let days { try validateDays(days) } else if faults { throw ValidationError("--faults needs --days") }
    }

    func run() async throws {
        if let days { return try await runDays(days) }
        let (setup, venueIdentity, herald) = try nodeSetup()
        let venue = VenueConfiguration(
            visitors: visitors, openingHours: hours, seed: seed, checkInSeconds: setup.diary.checkInSeconds,
            checkOutSeconds: setup.diary.checkOutSeconds)
        let truth = VenueModel.generate(venue)
        let directory = URL(fileURLWithPath: dataDirectory)
        let diaryPath = directory.appendingPathComponent("simulated-diary.sqlite").path
        let exportPath = directory.appendingPathComponent("simulated-export.csv").path
        let store = try freshSimulatedDiary(diaryPath, in: directory, named: dataDirectory)

        var logs: HeraldLogWriter?
        if let heraldLogs {
            try reportingFailures {
                do {
                    try FileManager.default.createDirectory(atPath: heraldLogs, withIntermediateDirectories: true)
                } catch {
                    throw CLIFailure(message: "\(heraldLogs): cannot create the directory", status: ExitStatus.cannotCreate)
                }
            }
            logs = HeraldLogWriter(
                directory: heraldLogs, deviceName: venueIdentity.name, softwareVersion: ProductVersion.string,
                ownPayload: try setup.identity().payload, budgetBytes: herald.logBudgetBytes)
        }
        var run = try VenueRun(truth: truth, setup: setup, store: store, heraldLogs: logs)
        let end = truth.lastDeparture + venue.checkOutSeconds + 5
        let pacer = Pacer(pacing: Pacing(speed) ?? .unpaced, startVirtual: 0, startWall: .now)
        var status = StatusLine(interactive: isatty(STDERR_FILENO) == 1, truth: truth, end: end)
        var logFailure: String?
        while run.now < end {
            run.run(until: min(end, run.now + 1))
            // A Herald-log failure is said once, when it first happens.
            if logFailure == nil, let logs = run.keeper.heraldLogs, let failure = logs.failure {
                logFailure = failure
                if status.interactive { Console.status("\n") }
                Console.error(HeraldLogWriter.Notice.failing(droppedRows: logs.droppedRows - logs.droppedOverBudget, reason: failure).description)
            }
            status.show(run)
            let wait = pacer.delay(untilVirtual: run.now, wallNow: .now)
            if wait > .zero { try await Task.sleep(for: wait) }
        }
        run.finish()
        status.done(run)

        let report = EfficacyReport(truth: truth, diary: try store.visits(), reads: run.reads, payloadWrites: run.air.payloadWrites)
        try reportingFailures {
            let file = try OutputFile(exportPath)
            do {
                try DiaryExport.export(
                    .csv, from: store, window: .all, venue: venueIdentity,
                    generatedAt: venue.origin + run.now, to: file.write)
                try file.commit()
            } catch {
                file.abandon()
                throw error
            }
            let line = try report.json()
            try Data((line + "\n").utf8).write(to: directory.appendingPathComponent("efficacy.json"))
        }
        Console.out(report.text)
        Console.out("  diary \(diaryPath), export \(exportPath)")
        if let heraldLogs, let logs = run.keeper.heraldLogs {
            Console.out("  Herald logs \(heraldLogs): " + Self.summary(logs))
        }
        if json { Console.out(try report.json()) }
        if let heraldLogs, let logs = run.keeper.heraldLogs, logs.failedFlushes > 0 {
            let failure = logFailure ?? logs.failure ?? "an I/O error"
            Console.error("Herald logs \(heraldLogs): \(logs.droppedRows - logs.droppedOverBudget) rows could not be written (\(failure))")
            throw ExitCode(ExitStatus.ioError)
        }
    }

    /// What the Herald logs could not keep: rows dropped for failed writes and for the budget,
    /// day folders deleted for the budget.
    static func summary(_ logs: HeraldLogWriter) -> String {
        guard logs.droppedRows > 0 || logs.foldersDeletedForBudget > 0 else { return "every row written" }
        var parts: [String] = []
        let failed = logs.droppedRows - logs.droppedOverBudget
        if failed > 0 { parts.append("\(failed) rows dropped (writes failed)") }
        let budget = HeraldLogWriter.Notice.megabytes(logs.budgetBytes ?? 0)
        if logs.droppedOverBudget > 0 { parts.append("\(logs.droppedOverBudget) rows dropped over the budget of \(budget)") }
        if logs.foldersDeletedForBudget > 0 { parts.append("\(logs.foldersDeletedForBudget) day folders deleted for the budget of \(budget)") }
        return parts.joined(separator: ", ")
    }

    /// The node to simulate, the venue its export names and the `[herald]` settings (the Herald
    /// logs' budget): the config file's, or the defaults.
    private func nodeSetup() throws -> (NodeSetup, VenueIdentity, HeraldSettings) {
        guard let config else {
            let setup = NodeSetup()
            return (setup, VenueIdentity(setup.beacon), HeraldSettings())
        }
        var options = ConfigOptions()
        options.config = config
        let settings = try options.load()
        return (settings.nodeSetup, settings.venue, settings.herald)
    }
}

/// The live one-line status on standard error: venue time and how far the run is, visitors
/// arrived so far, present, checked in, open visits, what the radio is doing, and the
/// appliance's LEDs (status LED from the same rule as the service's; the activity LED flashes for
/// check-ins since the last line). On a terminal it redraws one line; otherwise it prints a line
/// every half hour of venue time, and at least every 10 wall seconds, so a long run shows its
/// progress. Never on standard output (`--json`'s report is there).
struct StatusLine {
    let interactive: Bool
    /// Off a terminal, the longest wall time without a line.
    static let quietLimit = Duration.seconds(10)
    private var lastShown = ContinuousClock.now - .seconds(1)
    private var lastLine = ContinuousClock.now
    private var lastLoggedVenueTime = -Double.infinity
    private var checkInsShown = 0
    /// Visitors' arrival times (virtual seconds), in order, and how many have passed.
    private let arrivals: [Double]
    private var arrived = 0
    /// Where the run ends, virtual seconds.
    private let end: Double

    init(interactive: Bool, truth: GroundTruth, end: Double) {
        self.interactive = interactive
        self.end = end
        arrivals = truth.people.filter { $0.role == .visitor }.compactMap { $0.presence.first?.start }.sorted()
    }

    mutating func show(_ run: VenueRun) {
        if interactive {
            guard ContinuousClock.now - lastShown >= .milliseconds(200) else { return }
            lastShown = .now
            Console.status("\r" + text(run) + "   ")
        } else if run.now - lastLoggedVenueTime >= 1800 || ContinuousClock.now - lastLine >= Self.quietLimit {
            lastLoggedVenueTime = run.now
            lastLine = .now
            Console.status(text(run) + "\n")
        }
    }

    mutating func done(_ run: VenueRun) {
        Console.status((interactive ? "\r" : "") + text(run) + "\n")
    }

    private mutating func text(_ run: VenueRun) -> String {
        let t = Int(run.now)
        let clock = String(format: "%02d:%02d:%02d", t / 3600, t % 3600 / 60, t % 60)
        let c = run.counters.diary
        let status = ApplianceEdge.status(radio: run.driver.condition, clockSynchronised: true, open: true)
        let activity = c.checkIns > checkInsShown ? "flashing" : "off"
        checkInsShown = c.checkIns
        while arrived < arrivals.count, arrivals[arrived] <= run.now { arrived += 1 }
        let done = end > 0 ? min(100, Int(run.now / end * 100)) : 100
        return "venue \(clock) (\(done) %)  visitors arrived \(arrived) of \(arrivals.count)  present \(run.pipeline.diary.tracker.openVisitCount)  checked in today \(c.checkIns)  "
            + "open visits \(c.checkIns + c.reopened - c.checkOuts)  radio \(run.driver.condition)  links \(run.core.engine.linkCount)  "
            + "LEDs: status \(Self.describe(status.pattern)), activity \(activity)"
    }

    private static func describe(_ pattern: LEDPattern) -> String {
        switch pattern {
        case .off: return "off"
        case .on: return "on"
        case LEDTimings.slowBlink: return "slow blink"
        case LEDTimings.fastBlink: return "fast blink"
        default: return "blip"
        }
    }
}

/// The simulated venue's diary at `path` in `directory` (made if needed; `name` is how the user
/// gave it), new for each run: the report judges this run's visits only. Shared by one opening
/// and `--days`.
func freshSimulatedDiary(_ path: String, in directory: URL, named name: String) throws -> DiaryStore {
    try reportingFailures { () throws -> DiaryStore in
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CLIFailure(message: "\(name): cannot create the directory", status: ExitStatus.cannotCreate)
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return try DiaryStore(path: path)
    }
}
