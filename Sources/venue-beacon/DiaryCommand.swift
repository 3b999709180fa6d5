import Appliance
import ArgumentParser
import Foundation
import VenueDiary
import VenueNode

struct DiaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diary",
        abstract: "Look after the venue diary (the SQLite file named by [diary] path).",
        subcommands: [Replay.self, Stats.self, Purge.self, Check.self, Salvage.self])

    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Feed a sightings file through the presence tracker into the diary.",
            discussion: """
                The file is CSV with the header time,kind,payload,rssi: time as Unix seconds (a \
                fraction allowed) or ISO-8601; kind one of herald, gaen, opentrace, advert; payload \
                in hex; rssi in dBm, or empty when not measured. Sightings go through the same \
                diary pipeline as the live service (presence tracker, retention, batched writer), \
                with the [diary] limits of the config file; retention counts from the replayed \
                time, never later than now (or --now). A sighting stamped more than 10 minutes \
                after now is refused, naming its line; a gaen payload is 16 or 20 bytes. At the end of the \
                file every visit is closed at its last sighting. The whole file is checked first: \
                a malformed row is reported with its line number and nothing is written (exit 65). \
                A replay that fails while writing (killed, a full disk: exit 74, a file that changed \
                since the check: exit 74, its size before and after said) keeps what it wrote and reads no \
                more of the file; the visits it left open are closed at their last \
                sighting by the next replay or purge (and shown closed by exports), and replaying \
                the file again completes it: replaying the same file again does not duplicate visits. The file is read twice (it must not change in between) and \
                never held in memory; a diary that fails SQLite's quick_check is refused.
                """)

        @OptionGroup var options: ConfigOptions
        @OptionGroup var now: NowOption
        @Argument(help: ArgumentHelp("The sightings CSV file.", valueName: "file")) var file: String

        func run() throws {
            let settings = try options.load()
            try reportingFailures(diary: settings.diary.path) {
                let scan: SightingsFile.Scan
                do {
                    scan = try SightingsFile.scan(file, now: now.time)
                } catch let error as SightingsCSVError {
                    throw CLIFailure(message: "\(file): \(error.description); nothing was written", status: ExitStatus.dataError)
                } catch let error as SightingsFileError {
                    throw CLIFailure(message: error.description, status: error.isMissing ? ExitStatus.noInput : ExitStatus.ioError)
                }
                let store = try DiaryStore(path: settings.diary.path)
                // What an earlier replay left open when it was interrupted, closed first.
                let abandoned = try store.closeAbandonedVisits(now: now.time, abandonedAfter: settings.diarySettings.abandonedAfter)
                let summary: ReplaySummary
                do {
                    summary = try SightingsReplay.replay(scan, into: store, settings: settings.diarySettings, now: now.time)
                } catch let error as SightingsFileError {
                    // Changed or unreadable since the check: what was written is kept (see the help).
                    throw CLIFailure(
                        message: error.description + "; the visits written so far are kept, closed at their last sighting by the next replay or purge",
                        status: ExitStatus.ioError)
                }
                var lines = [
                    "replayed \(summary.sightings) sightings from \(file) into \(settings.diary.path)",
                    "visits: \(summary.visits) checked in, \(summary.walkPasts) walk-pasts not recorded",
                ]
                if abandoned > 0 {
                    lines.insert("closed \(abandoned) visits an interrupted replay had left open, at their last sighting", at: 0)
                }
                if summary.ignoredWeak > 0 {
                    lines.append("ignored: \(summary.ignoredWeak) sightings weaker than min_rssi")
                }
                if summary.placeholders > 0 {
                    lines.append(
                        "placeholders: \(summary.placeholders) sightings of placeholder identifiers (all one byte value, as Herald phones "
                            + "send from 2026-03-18) not recorded: they name no one")
                }
                if summary.seenOnce > 0 || summary.pendingEvicted > 0 {
                    var admission = "admission: \(summary.seenOnce) identities seen once, never tracked (among the walk-pasts)"
                    if summary.forgottenEarly > 0 {
                        admission += ", \(summary.forgottenEarly) of them forgotten before check_out (the filter of first sightings was full)"
                    }
                    if summary.pendingEvicted > 0 {
                        admission += "; \(summary.pendingEvicted) pending visits evicted (the tracker was full)"
                    }
                    lines.append(admission)
                }
                if settings.diary.recordingDays == 0 {
                    lines.append("nothing written: recording_days = 0")
                }
                Console.out(lines.joined(separator: "\n"))
            }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how many visits the diary holds, how many are open, its time span and size.",
            discussion: """
                What the running service's admission drops (identities seen once and never tracked, \
                first sightings forgotten early and pending visits evicted under an advert flood) \
                are run-time counts, not kept in the diary: the service logs them once a minute \
                while they look like a flood ("diary admission in the last minute: ..."), and its \
                status line (systemctl status venue-beacon) shows the last such minute. \
                'diary replay' prints them for a replay.
                """)

        @OptionGroup var options: ConfigOptions
        @Flag(name: .long, help: "Print one JSON object.") var json = false

        func run() throws {
            let settings = try options.load()
            try reportingFailures(diary: settings.diary.path) {
                let store = try DiaryStore(path: settings.diary.path, readOnly: true)
                let stats = try store.stats()
                let oldest = stats.oldestCheckIn.map(TimeText.iso8601)
                let newest = stats.newestCheckOut.map(TimeText.iso8601)
                // Replication: what the hub has not acknowledged yet (as the node last heard).
                var hub: (backlog: Int, heard: Double?)?
                if settings.replication != nil {
                    let diary = try store.diaryID()
                    let ack = try store.replicationAck().flatMap { $0.diary == diary ? $0 : nil }
                    hub = (try store.backlog(after: ack?.acked ?? 0), ack?.at)
                }
                if json {
                    func q(_ s: String?) -> String { s.map { "\"\($0)\"" } ?? "null" }
                    let replication = hub.map { ", \"hub_backlog\": \($0.backlog), \"hub_acknowledged_at\": \(q($0.heard.map(TimeText.iso8601)))" } ?? ""
                    Console.out(
                        "{\"path\": \"\(settings.diary.path)\", \"visits\": \(stats.visits), \"open_visits\": \(stats.openVisits), "
                            + "\"oldest_check_in\": \(q(oldest)), \"newest_check_out\": \(q(newest)), "
                            + "\"clock_uncorrected\": \(stats.uncorrectedVisits), \"file_bytes\": \(stats.fileBytes)\(replication)}")
                } else {
                    defer {
                        if let hub {
                            Console.out(
                                "hub backlog:      \(hub.backlog) visits not yet acknowledged by the venue hub"
                                    + (hub.heard.map { " (last acknowledgement \(TimeText.iso8601($0)))" } ?? " (no acknowledgement heard yet)"))
                        }
                    }
                    Console.out("""
                        diary:            \(settings.diary.path)
                        visits:           \(stats.visits)
                        open visits:      \(stats.openVisits)
                        oldest check-in:  \(oldest ?? "-")
                        newest check-out: \(newest ?? "-")
                        unsynced clock:   \(stats.uncorrectedVisits) visits recorded before clock sync, times not corrected
                        file size:        \(stats.fileBytes) bytes
                        admission:        run-time counts of the service (flood drops and evictions): its log and status line
                        """)
                }
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete visits older than recording_days, and outbox emails carrying them (the service also does this at start and hourly).",
            discussion: """
                Deletes visits whose check-out is more than recording_days before now. With \
                recording_days = 0 every visit is deleted; with "forever" nothing is. Deleted rows \
                are overwritten in the file (secure_delete). Emails waiting in the outbox whose \
                earliest visit is that old are deleted undelivered too.
                """)

        @OptionGroup var options: ConfigOptions
        @OptionGroup var now: NowOption

        func run() async throws {
            let settings = try options.load()
            guard let days = settings.diary.recordingDays else {
                Console.out("nothing purged: recording_days is \"forever\"")
                return
            }
            let time = now.time
            try reportingFailures(diary: settings.diary.path) {
                guard FileManager.default.fileExists(atPath: settings.diary.path) else {
                    Console.out("no diary at \(settings.diary.path): no visits to purge")
                    return
                }
                let store = try DiaryStore(path: settings.diary.path)
                let abandoned = try store.closeAbandonedVisits(now: time, abandonedAfter: settings.diarySettings.abandonedAfter)
                if abandoned > 0 { Console.out("closed \(abandoned) abandoned open visits at their last sighting") }
                let deleted = try store.purge(now: time, recordingDays: days)
                Console.out("purged \(deleted) visits with check-out before \(TimeText.iso8601(time - Double(days) * 86_400))")
            }
            let dropped: [OutboxEntry]
            do {
                dropped = try await ExportDelivery(settings: settings).outbox.purge(now: Date(timeIntervalSince1970: time), waiting: { Console.error($0) })
            } catch {
                Console.error("cannot purge the outbox \(settings.export.outbox): \(error)")
                throw ExitCode(ExitStatus.ioError)
            }
            if !dropped.isEmpty {
                Console.out("dropped \(dropped.count) undelivered email\(dropped.count == 1 ? "" : "s") from the outbox: \(dropped.map(\.id).joined(separator: ", "))")
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the diary file for damage (SQLite's integrity_check), without changing it.",
            discussion: """
                Prints "ok" and exits 0 for a sound diary; otherwise prints what SQLite found (up \
                to 100 problems) and exits 65. A damaged diary is refused by the service and by \
                replay; `venue-beacon diary salvage NEW_FILE` copies its readable visits.
                """)

        @OptionGroup var options: ConfigOptions

        func run() throws {
            let settings = try options.load()
            try reportingFailures(diary: settings.diary.path) {
                let problems = try DiaryRepair.check(path: settings.diary.path)
                if problems == ["ok"] {
                    Console.out("\(settings.diary.path): ok")
                    return
                }
                Console.out(problems.map { "\(settings.diary.path): \($0)" }.joined(separator: "\n"))
                throw CLIFailure(
                    message: "\(settings.diary.path) is damaged: run `venue-beacon diary salvage NEW_FILE` and point [diary] path at NEW_FILE",
                    status: ExitStatus.dataError)
            }
        }
    }

    struct Salvage: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy every readable visit of a damaged diary into a new diary file.",
            discussion: """
                Reads the diary named by [diary] path read-only and writes each visit SQLite can \
                still read, with its id, times and clock marks, into OUT (a new file, mode 0600). \
                The damaged file is left as it was. Stop the service first, then point [diary] \
                path at OUT and start it again.
                """)

        @OptionGroup var options: ConfigOptions
        @Argument(help: ArgumentHelp("The new diary file to write (must not exist).", valueName: "out")) var out: String

        func run() throws {
            let settings = try options.load()
            try reportingFailures(diary: settings.diary.path) {
                let report = try DiaryRepair.salvage(from: settings.diary.path, to: out)
                var lines = ["salvaged \(report.visits) visits from \(settings.diary.path) into \(out)"]
                if report.unreadableIDs > 0 {
                    lines.append("lost: \(report.unreadableIDs) visit ids could not be read (or were never used)")
                }
                Console.out(lines.joined(separator: "\n"))
            }
        }
    }
}
