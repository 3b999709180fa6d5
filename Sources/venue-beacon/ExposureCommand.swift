import Appliance
import ArgumentParser
import Exposure
import Foundation
import VenueDiary

struct ExposureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exposure",
        abstract: "Match published Exposure Notification diagnosis keys against the diary (docs/exposure.md).",
        subcommands: [ExposureCheckCommand.self])
}

/// The key-file options shared by `exposure check` and `export --exposures`.
struct KeyFileOptions: ParsableArguments {
    @Flag(name: .long, help: "Read key files whose signature does not verify (the report says so).")
    var unverified = false
}

struct ExposureCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Report the time windows a positive case was at the venue.",
        discussion: """
            Reads key export zips as health authorities publish them (export.bin and export.sig), \
            verifies each signature against [exposure] verification_keys (matched by the file's \
            verification_key_id and verification_key_version), derives every key's rolling \
            proximity identifiers and looks them up among the diary's gaen visits in the share \
            window [now - share_days, now]; an identifier matches when heard within 2 hours of its \
            interval. Reports per matched key the first and last sighting, minutes, transmit power \
            and attenuation, the visits and a risk score, and the union of the matched visits as \
            time windows. Nothing is fetched and nothing is written. A file that is not a valid, \
            verified key export: exit status 65, nothing reported.
            """)

    @OptionGroup var options: ConfigOptions
    @Argument(help: ArgumentHelp("Key export zips.", valueName: "file.zip"))
    var files: [String]
    @Flag(name: .long, help: "One JSON object on standard output (same as --format json).")
    var json = false
    @Option(name: .long, help: "text, json or nhs-risky-venues (the NHS COVID-19 app's risky-venue upload CSV).")
    var format: ExposureFormat = .text
    @OptionGroup var keyFiles: KeyFileOptions
    @OptionGroup var now: NowOption

    enum ExposureFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
        case nhsRiskyVenues = "nhs-risky-venues"
    }

    func run() throws {
        let settings = try options.load()
        try reportingFailures(diary: settings.diary.path) {
            let result = try exposureCheck(files, settings: settings, unverified: keyFiles.unverified, now: now.time)
            let report = result.report
            switch json ? .json : format {
            case .json: Console.out(report.json())
            case .text: Console.out(report.text())
            case .nhsRiskyVenues:
                Console.out(report.nhsRiskyVenues(venueID: settings.exposure.nhsVenueID ?? String(settings.venue.code)))
            }
            if report.files.contains(where: { !$0.verified }) {
                Console.error("warning: some key files were read without a verified signature (--unverified)")
            }
        }
    }
}

/// Runs the check with the configured keys and risk weights; a bad key file is exit status 65.
func exposureCheck(_ files: [String], settings: Settings, unverified: Bool, now: Double) throws -> (report: ExposureReport, matches: [KeyMatch]) {
    let config = settings.exposure
    var keys: [VerificationKey] = []
    for key in config.verificationKeys {
        guard let parsed = VerificationKey(id: key.id, version: key.version, text: key.publicKey) else {
            throw CLIFailure(message: "exposure.verification_keys: \(key.id):\(key.version) is not a P-256 public key", status: ExitStatus.config)
        }
        keys.append(parsed)
    }
    let risk = RiskConfiguration(
        attenuationThresholds: config.attenuationThresholds, attenuationWeights: config.attenuationWeights.map(Double.init),
        transmissionRiskWeights: config.transmissionRiskWeights.map(Double.init),
        onsetDays: config.onsetDays[0]...config.onsetDays[1], outsideOnsetWeight: Double(config.outsideOnsetWeight))
    let options = ExposureCheck.Options(verificationKeys: keys, allowUnverified: unverified, risk: risk)
    do {
        // Files first: a missing file, a directory or a FIFO is refused before the diary is
        // opened. Then each file is read, verified and matched in turn (docs/exposure.md).
        try ExposureCheck.checkFiles(files)
        let window = try DiaryExport.window(settings.diarySettings.shareWindow, now: now)
        let store = try DiaryStore(path: settings.diary.path, readOnly: true)
        return try ExposureCheck.run(files, store: store, window: window, options: options, now: now)
    } catch let error as ExposureCheckError {
        switch error.problem {
        case .unreadable, .notAFile: throw CLIFailure(message: error.description, status: ExitStatus.noInput)
        default: throw CLIFailure(message: error.description, status: ExitStatus.dataError)
        }
    }
}
