import Appliance
import ArgumentParser
import Foundation

struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Emails waiting for sendmail to accept them.",
        discussion: """
            An export email that sendmail did not take waits in export.outbox and the service \
            retries it with backoff until it is delivered. These commands show, flush and drop \
            it. A waiting email is deleted undelivered once the first visit it carries is older \
            than recording_days, as the diary deletes that visit (`venue-beacon diary purge` and \
            the service both do it).
            """,
        subcommands: [List.self, Retry.self, Drop.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the waiting emails, oldest first.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let settings = try options.load()
            let entries: [OutboxEntry]
            do {
                entries = try await ExportDelivery(settings: settings).outbox.entries()
            } catch {
                Console.error("cannot read the outbox: \(error)")
                throw ExitCode(ExitStatus.ioError)
            }
            for entry in entries {
                let next = ISO8601DateFormatter().string(from: entry.nextAttempt)
                Console.out("\(entry.id)  \(entry.messageID)  attempts \(entry.attempts)  next \(next)  \(entry.lastError ?? "not tried yet")")
            }
            Console.error("\(entries.count) email\(entries.count == 1 ? "" : "s") waiting in \(settings.export.outbox)")
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Hand every waiting email to sendmail now.",
            discussion: "Exit status 0 when the outbox is empty afterwards, 75 when emails still wait.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let settings = try options.load()
            let report = await ExportDelivery(settings: settings).outbox.retryDue(now: Date(), force: true, waiting: { Console.error($0) })
            if let problem = report.problem {
                Console.error(problem)
                throw ExitCode(ExitStatus.ioError)
            }
            for entry in report.expired { Console.error("dropped \(entry.messageID): the visits it carries passed recording_days") }
            for id in report.delivered { Console.error("delivered \(id)") }
            for entry in report.failed { Console.error("still waiting: \(entry.messageID): \(entry.lastError ?? "")") }
            Console.error("\(report.delivered.count) delivered, \(report.waiting) waiting")
            if report.waiting > 0 { throw ExitCode(ExitStatus.tempFail) }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a waiting email without sending it.",
            discussion: "ID is the first column of `venue-beacon outbox list`. Exit status 66 when no email has that id.")
        @OptionGroup var options: ConfigOptions
        @Argument(help: ArgumentHelp("The email's id.", valueName: "id")) var id: String

        func run() async throws {
            let settings = try options.load()
            let dropped: OutboxEntry?
            do {
                dropped = try await ExportDelivery(settings: settings).outbox.drop(id: id, waiting: { Console.error($0) })
            } catch {
                Console.error("cannot read the outbox: \(error)")
                throw ExitCode(ExitStatus.ioError)
            }
            guard let dropped else {
                Console.error("no email \(id) in the outbox \(settings.export.outbox) (see `venue-beacon outbox list`)")
                throw ExitCode(ExitStatus.noInput)
            }
            Console.error("dropped \(dropped.id) (\(dropped.messageID)) without sending it")
        }
    }
}
