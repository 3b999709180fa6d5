import Appliance
import ArgumentParser
import Foundation

extension ExportCommand {
    /// `export --deliver email|directory`: the same path the GPIO button takes.
    func deliverExport(to target: DeliveryTarget, settings: Settings) async throws {
        try await deliverExport(to: target, export: settings.export, recordingDays: settings.diary.recordingDays, source: settings.diary.path) { sealing in
            try ExportDocument.fromDiary(settings: settings, share: shareWindow, now: now.time, sealing: sealing)
        }
    }

    /// Delivers the document `make` builds (a node's diary or a venue hub's store, named by
    /// `source` in errors) to `target`, as `[export]` (`export`) says.
    func deliverExport(
        to target: DeliveryTarget, export: ExportSettings, recordingDays: Int?, source: String,
        make: (ExportSealing) throws -> ExportDocument
    ) async throws {
        let time = now.time
        let delivery = ExportDelivery(settings: export, recordingDays: recordingDays)
        if target == .email && !export.recipients.isEmpty && export.refusesPlaintextEmail {
            Console.error(ExportSettings.plaintextRefused)
            throw ExitCode(ExitStatus.config)
        }
        if let problem = await delivery.preflight(target) {
            Console.error(problem)
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let sealing: ExportSealing
        do {
            sealing = try ExportSealing.load(export)
        } catch {
            Console.error(error.description)
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let document = try reportingFailures(diary: source) { try make(sealing) }
        let result = await delivery.deliver(document, to: target, now: Date(timeIntervalSince1970: time))
        Console.error(result.description)
        switch result {
        case .delivered: return
        case .queued: throw ExitCode(ExitStatus.tempFail)
        case .failed: throw ExitCode(ExitStatus.cannotCreate)
        }
    }
}
