import ArgumentParser
import Foundation
import VenueDiary

/// `--now TIME`: Unix seconds or ISO-8601. For audits and tests; it never moves the running
/// service's clock.
struct NowOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Act as if it were this time (Unix seconds or ISO-8601, e.g. 2026-11-22T18:00:00Z).",
            discussion: "For audits and tests; the running service's clock is never moved.",
            valueName: "time"))
    var now: String?

    func validate() throws {
        if let now, TimeText.parse(now) == nil {
            throw ValidationError("--now \(now): expected Unix seconds or ISO-8601 such as 2026-11-22T18:00:00Z")
        }
    }

    /// The chosen time, or the system clock.
    var time: Double { now.flatMap(TimeText.parse) ?? Date().timeIntervalSince1970 }
}

/// Exit codes from sysexits(3), so scripts and systemd can tell mistakes apart.
enum ExitStatus {
    static let dataError: Int32 = 65  // bad input file
    static let noInput: Int32 = 66  // missing input
    static let software: Int32 = 70
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let tempFail: Int32 = 75  // an email waits in the outbox
    static let config: Int32 = 78
}

/// Runs `body`; known failures are printed as one clear line on stderr and become an exit code.
func reportingFailures<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as DiaryError {
        Console.error(error.description)
        switch error {
        case .missing: throw ExitCode(ExitStatus.noInput)
        case .sharingDisabled, .invalidSetting: throw ExitCode(ExitStatus.config)
        case .notADiary, .newerSchema, .needsMigration, .unreadable: throw ExitCode(ExitStatus.dataError)
        }
    } catch let error as CLIFailure {
        Console.error(error.message)
        throw ExitCode(error.status)
    } catch {
        Console.error("\(error)")
        throw ExitCode(ExitStatus.software)
    }
}

/// A failure the command explains itself.
struct CLIFailure: Error {
    var message: String
    var status: Int32
}
