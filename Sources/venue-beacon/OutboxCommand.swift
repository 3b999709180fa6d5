import Appliance
import ArgumentParser
import Foundation

struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Emails waiting for sendmail to accept them.",
        discussion: """
            An export email that sendmail did not take waits in export.outbox and the service \
            retries it with backoff until it is delivered. These commands show and flush it.
            """,
        subcommands: [List.self, Retry.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the waiting emails, oldest first.")
        @OptionGroup var options: ConfigOptions

        func run() async throws {
            let settings = try options.load()
            let entries: [OutboxEntry]
            do {
                entries = try await ExportDelivery(settings: settings.export).outbox.entries()
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
            let report = await ExportDelivery(settings: settings.export).outbox.retryDue(now: Date(), force: true)
            if let problem = report.problem {
                Console.error(problem)
                throw ExitCode(ExitStatus.ioError)
            }
            for id in report.delivered { Console.error("delivered \(id)") }
            for entry in report.failed { Console.error("still waiting: \(entry.messageID): \(entry.lastError ?? "")") }
            Console.error("\(report.delivered.count) delivered, \(report.waiting) waiting")
            if report.waiting > 0 { throw ExitCode(ExitStatus.tempFail) }
        }
    }
}
