import Appliance
import ArgumentParser
import Exposure
import Foundation
import Replication
import VenueDiary
import Glibc

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the diary's share window as CSV or JSON, for contact tracers.",
        discussion: """
            Exports the visits overlapping [now - share_days, now] (every visit for share_days = \
            "all"; refused for share_days = 0). CSV columns: visit_id, kind, payload (hex), \
            check_in, check_out (UTC ISO-8601; check_out empty while the visit is open), \
            duration_seconds, samples, rssi_max, rssi_mean. JSON adds the venue and the window.

            --output PATH writes a new file (mode 0600) beside PATH and renames it over PATH when \
            it is complete; a character device or FIFO at PATH is written into; a symbolic link \
            is refused (name the file it points to).

            With export.recipients set, the export is sealed to those age keys whatever the \
            destination (standard output included): only `age -d` with a tracer's key opens it. \
            A file written with --output PATH gets the node's minisign signature as PATH.minisig \
            (when this user can read the node's key, export.signing_key); --signature PATH puts \
            it elsewhere, and is how an export to standard output or a device is signed.

            --deliver email hands the CSV (sealed, and signed) with a covering note to the configured sendmail for \
            export.email; if sendmail does not take it, the email waits in the outbox and is \
            retried (by the service, or `venue-beacon outbox retry`): exit status 75. Without \
            export.recipients an email is refused (exit 78) unless export.plaintext = true. \
            --deliver directory writes the CSV atomically into export.directory (a USB stick).
            """)

    @OptionGroup var options: ConfigOptions
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Days to share instead of share_days, or \"all\".", valueName: "days"))
    var days: String?
    @Option(name: .long, help: "csv or json.") var format: DiaryExport.Format = .csv
    @Option(name: .long, help: ArgumentHelp("Write to this file instead of standard output (- for standard output).", valueName: "path"))
    var output: String = "-"
    @Option(
        name: .long,
        help: ArgumentHelp("Write the node's signature here instead of beside --output (PATH.minisig).", valueName: "path"))
    var signature: String?
    @OptionGroup var now: NowOption
    @Option(name: .long, help: ArgumentHelp("Deliver the CSV instead of printing it: email or directory.", valueName: "target"))
    var deliver: DeliveryTarget?
    @Option(
        name: .long, parsing: .upToNextOption,
        help: ArgumentHelp(
            "Export only the visits that match these Exposure Notification key files (docs/exposure.md).", valueName: "file.zip"))
    var exposures: [String] = []
    @OptionGroup var keyFiles: KeyFileOptions

    func validate() throws {
        if let days, days != "all", Int(days).map({ $0 >= 1 }) != true {
            throw ValidationError("--days \(days): expected a whole number of days ≥ 1, or all")
        }
        if deliver != nil && format != .csv { throw ValidationError("--deliver sends the CSV: leave out --format json") }
        if deliver != nil && output != "-" { throw ValidationError("--deliver and --output do not combine") }
        if deliver != nil && signature != nil {
            throw ValidationError("--deliver signs what it delivers, beside it: leave out --signature")
        }
        if let signature, signature == "-" || signature == output || (output != "-" && OutputFile.sameFile(signature, output)) {
            throw ValidationError("--signature \(signature): name a file other than the export's")
        }
        if !exposures.isEmpty && deliver != nil {
            throw ValidationError("--exposures writes to standard output or --output; --deliver is not supported with it yet")
        }
        if keyFiles.unverified && exposures.isEmpty { throw ValidationError("--unverified goes with --exposures") }
    }

    var shareWindow: ShareWindow? {
        guard let days else { return nil }
        return days == "all" ? .all : .days(Int(days) ?? 0)
    }

    func run() async throws {
        if HubConfig.isHubConfig(path: options.path) {
            try await exportVenue()
            return
        }
        let settings = try options.load()
        if let deliver {
            try await deliverExport(to: deliver, settings: settings)
            return
        }
        let sealing = Self.sealingForOutput(settings.export)
        if !exposures.isEmpty {
            try exportExposures(settings: settings, sealing: sealing)
            return
        }
        try reportingFailures(diary: settings.diary.path) {
            let window = try DiaryExport.window(shareWindow ?? settings.diarySettings.shareWindow, now: now.time)
            let store = try DiaryStore(path: settings.diary.path, readOnly: true)
            let file = try OutputFile(output, protecting: protectedFiles(settings))
            do {
                let sealer = try ExportSealer(sealing: sealing, output: file.write)
                let summary = try DiaryExport.export(
                    format, from: store, window: window, venue: settings.venue, generatedAt: now.time,
                    nodeKey: sealing.key?.fingerprint, abandonedAfter: settings.diarySettings.abandonedAfter, to: sealer.write)
                let start = try window.from ?? store.stats().oldestCheckIn ?? now.time
                let signed = try sealer.finish(
                    trustedComment: ExportDocument.trustedComment(
                        file: outputName, venue: settings.venue, nodeKey: sealing.key?.fingerprint,
                        windowStart: Date(timeIntervalSince1970: start), windowEnd: Date(timeIntervalSince1970: window.to ?? now.time),
                        visits: summary.visits, generated: Date(timeIntervalSince1970: now.time)),
                    untrustedComment: ExportDocument.untrustedComment(venue: settings.venue, nodeKey: sealing.key?.fingerprint))
                try file.commit()
                if output != "-" { Console.error("exported \(summary.visits) visits to \(output)\(Self.sealedNote(sealing))") }
                try writeSignature(signed, key: sealing.key, protecting: protectedFiles(settings))
                warnAboutClock(summary)
            } catch {
                file.abandon()
                throw error
            }
        }
    }

    /// The configured recipients, and the node's key when this user can read (or create) it:
    /// a local export by an operator without access to the key is written unsigned, with a warning.
    static func sealingForOutput(_ settings: ExportSettings) -> ExportSealing {
        do {
            return try ExportSealing.load(settings)
        } catch {
            Console.error("warning: the export is not signed: \(error)")
            return ExportSealing(recipients: settings.ageRecipients, key: nil)
        }
    }

    /// Only a regular file (or nothing yet) at `path` gets a signature file beside it.
    static func isRegularFileTarget(_ path: String) -> Bool {
        guard path != "-" else { return false }
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// What --output and --signature must never replace: the diary and SQLite's files beside
    /// it, the node's key (its identity), the config, and the key files this export reads.
    func protectedFiles(_ settings: Settings) -> [ProtectedFile] {
        ProtectedFile.diary(settings.diary.path)
            + [ProtectedFile(settings.export.signingKey, role: "the node's signing key"), ProtectedFile(options.path, role: "the config file")]
            + exposures.map { ProtectedFile($0, role: "a key file this export reads") }
    }

    /// The export's name in its signed comment: the file's, or `-` for standard output.
    var outputName: String { (output as NSString).lastPathComponent }

    static func sealedNote(_ sealing: ExportSealing) -> String {
        guard sealing.sealed else { return "" }
        return " (sealed to \(sealing.recipients.count) age recipient\(sealing.recipients.count == 1 ? "" : "s"))"
    }

    /// Writes the export's signature (nil: the node's key was not readable, already said) to
    /// --signature, or beside a file written with --output; an export to standard output or a
    /// device without --signature is unsigned, and that is said too.
    func writeSignature(_ signed: String?, key: NodeSigningKey?, protecting protected: [ProtectedFile]) throws {
        guard let signed else { return }
        guard let path = signature ?? (Self.isRegularFileTarget(output) ? output + ".minisig" : nil) else {
            Console.error("the export is not signed: \(output == "-" ? "standard output" : output) has no file beside it for the signature (--signature PATH writes one)")
            return
        }
        let file = try OutputFile(path, protecting: protected + [ProtectedFile(output, role: "the export")])
        do {
            try file.write(Array(signed.utf8))
            try file.commit()
        } catch {
            file.abandon()
            throw error
        }
        Console.error("signed by node key \(key?.fingerprint ?? ""): \(path)")
    }
}

extension ExportCommand {
    /// `export --exposures FILE…`: only the visits that matched a diagnosis key, nothing else
    /// from the diary (data minimisation, docs/exposure.md). The JSON form adds the time windows.
    func exportExposures(settings: Settings, sealing: ExportSealing) throws {
        try reportingFailures(diary: settings.diary.path) {
            let (report, matches) = try exposureCheck(exposures, settings: settings, unverified: keyFiles.unverified, now: now.time)
            var seen = Set<Int64>()
            let visits = matches.flatMap { $0.visits.map(\.visit) }
                .filter { seen.insert($0.id ?? -1).inserted }
                .sorted { ($0.checkIn, $0.id ?? 0) < ($1.checkIn, $1.id ?? 0) }
            let window = try DiaryExport.window(shareWindow ?? settings.diarySettings.shareWindow, now: now.time)
            var bytes: [UInt8]
            switch format {
            case .csv:
                bytes = DiaryExport.csv(visits)
            case .json:
                // {"windows": [...], then the export's own fields.
                let export = DiaryExport.json(visits, venue: settings.venue, window: window, generatedAt: now.time)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let windows = String(decoding: try encoder.encode(report.windows), as: UTF8.self)
                bytes = Array("{\"windows\": \(windows),".utf8) + export.drop(while: { $0 != UInt8(ascii: "{") }).dropFirst()
            }
            // Sealed like any export when recipients are configured.
            let file = try OutputFile(output, protecting: protectedFiles(settings))
            let signed: String?
            do {
                let sealer = try ExportSealer(sealing: sealing, output: file.write)
                try sealer.write(bytes)
                signed = try sealer.finish(
                    trustedComment: ExportDocument.trustedComment(
                        file: outputName, venue: settings.venue, nodeKey: sealing.key?.fingerprint,
                        windowStart: Date(timeIntervalSince1970: window.from ?? visits.first?.checkIn ?? now.time),
                        windowEnd: Date(timeIntervalSince1970: window.to ?? now.time),
                        visits: visits.count, generated: Date(timeIntervalSince1970: now.time), exposureWindows: report.windows.count),
                    untrustedComment: ExportDocument.untrustedComment(venue: settings.venue, nodeKey: sealing.key?.fingerprint))
                try file.commit()
            } catch {
                file.abandon()
                throw error
            }
            if output != "-" {
                Console.error("exported \(visits.count) matched visits in \(report.windows.count) windows to \(output)\(Self.sealedNote(sealing))")
            }
            try writeSignature(signed, key: sealing.key, protecting: protectedFiles(settings))
        }
    }
}

extension ExportCommand {
    /// `export --config HUB`: the whole venue from the hub's store, every node's visits merged
    /// (docs/venue.md), with the `rooms` column (JSON: rooms and per-room segments); sealed and
    /// signed as a node's export.
    func exportVenue() async throws {
        let config = try loadHubConfig(options)
        guard exposures.isEmpty else {
            Console.error("--exposures matches a node's own diary: run it on the nodes (a venue hub holds no radio identifiers of its own)")
            throw ExitCode(ExitStatus.config)
        }
        if let deliver {
            try await deliverExport(to: deliver, export: config.export, recordingDays: config.diary.recordingDays, source: config.hub.store) { sealing in
                try ExportDocument.fromHub(config: config, share: shareWindow, now: now.time, sealing: sealing)
            }
            return
        }
        let sealing = Self.sealingForOutput(config.export)
        try reportingFailures(diary: config.hub.store) {
            let share = shareWindow ?? (config.diary.shareDays.map { ShareWindow.days($0) } ?? .all)
            let window = try DiaryExport.window(share, now: now.time)
            guard FileManager.default.fileExists(atPath: config.hub.store) else {
                throw DiaryError.missing(path: config.hub.store)
            }
            let store = try HubStore(path: config.hub.store)
            let protected = ProtectedFile.diary(config.hub.store)
                + [ProtectedFile(config.export.signingKey, role: "the signing key"), ProtectedFile(options.path, role: "the config file")]
            let file = try OutputFile(output, protecting: protected)
            do {
                let sealer = try ExportSealer(sealing: sealing, output: file.write)
                let summary = try HubExport.export(
                    format, from: store, window: window, venue: config.venue, checkOutSeconds: config.diary.checkOutSeconds,
                    generatedAt: now.time, nodeKey: sealing.key?.fingerprint,
                    abandonedAfter: config.abandonedAfter, to: sealer.write)
                let signed = try sealer.finish(
                    trustedComment: ExportDocument.trustedComment(
                        file: outputName, venue: config.venue, nodeKey: sealing.key?.fingerprint,
                        windowStart: Date(timeIntervalSince1970: window.from ?? now.time),
                        windowEnd: Date(timeIntervalSince1970: window.to ?? now.time),
                        visits: summary.visits, generated: Date(timeIntervalSince1970: now.time)),
                    untrustedComment: ExportDocument.untrustedComment(venue: config.venue, nodeKey: sealing.key?.fingerprint))
                try file.commit()
                if output != "-" { Console.error("exported \(summary.visits) venue visits to \(output)\(Self.sealedNote(sealing))") }
                try writeSignature(signed, key: sealing.key, protecting: protected)
                warnAboutClock(summary)
            } catch {
                file.abandon()
                throw error
            }
        }
    }
}

/// Says on standard error when some visits' times could not be corrected (the export marks them).
private func warnAboutClock(_ summary: DiaryExport.Summary) {
    let n = summary.clockUncorrected
    if n > 0 {
        Console.error(
            "warning: \(n) visit\(n == 1 ? " was" : "s were") recorded before the clock was synchronised and could not be "
                + "corrected (clock_uncorrected = 1); \(n == 1 ? "its" : "their") times may be off by hours")
    }
    let shared = summary.sharedIdentifier
    if shared > 0 {
        Console.error(
            "note: \(shared) visit\(shared == 1 ? "'s identifier was" : "s' identifiers were") carried by two or more phones at "
                + "once (shared_identifier = 1): \(shared == 1 ? "it" : "each") may be several people")
    }
}

extension DiaryExport.Format: ExpressibleByArgument {}
extension DeliveryTarget: ExpressibleByArgument {}
