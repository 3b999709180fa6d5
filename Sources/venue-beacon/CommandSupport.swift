import ArgumentParser
import Foundation
import Appliance
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
    static let noPermission: Int32 = 77  // the broker refused what this login sent
    static let config: Int32 = 78
}

/// Runs `body`; known failures are printed as one clear line on stderr and become an exit code.
/// `diary` names the diary file the body works on, so SQLite's failures can name it too.
func reportingFailures<T>(diary: String? = nil, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CLIFailure {
        Console.error(error.message)
        throw ExitCode(error.status)
    } catch let error as OutputFileError {
        Console.error(error.description)
        switch error {
        case .refused, .cannotOpen: throw ExitCode(ExitStatus.cannotCreate)
        case .cannotWrite: throw ExitCode(ExitStatus.ioError)
        }
    } catch let error as FileSystemError {
        Console.error(error.description)
        throw ExitCode(error.isWriteFailure ? ExitStatus.ioError : ExitStatus.cannotCreate)
    } catch {
        if let diaryError = DiaryError.from(error, path: diary ?? "the venue diary") {
            Console.error(diaryError.description)
            throw ExitCode(exitStatus(diaryError))
        }
        Console.error("\(error)")
        throw ExitCode(ExitStatus.software)
    }
}

func exitStatus(_ error: DiaryError) -> Int32 {
    switch error {
    case .missing: ExitStatus.noInput
    case .sharingDisabled, .invalidSetting: ExitStatus.config
    case .notADiary, .newerSchema, .needsMigration, .unreadable, .damaged: ExitStatus.dataError
    case .diskFull, .ioFailure: ExitStatus.ioError
    }
}

/// A failure the command explains itself.
struct CLIFailure: Error {
    var message: String
    var status: Int32
}
