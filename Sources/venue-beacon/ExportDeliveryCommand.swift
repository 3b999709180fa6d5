import Appliance
import ArgumentParser
import Foundation

extension ExportCommand {
    /// `export --deliver email|directory`: the same path the GPIO button takes.
    func deliverExport(to target: DeliveryTarget, settings: Settings) async throws {
        let time = now.time
        let delivery = ExportDelivery(settings: settings)
        if target == .email && !settings.export.recipients.isEmpty && settings.export.refusesPlaintextEmail {
            Console.error(ExportSettings.plaintextRefused)
            throw ExitCode(ExitStatus.config)
        }
        if let problem = await delivery.preflight(target) {
            Console.error(problem)
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let sealing: ExportSealing
        do {
            sealing = try ExportSealing.load(settings.export)
        } catch {
            Console.error(error.description)
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let document = try reportingFailures(diary: settings.diary.path) {
            try ExportDocument.fromDiary(settings: settings, share: shareWindow, now: time, sealing: sealing)
        }
        let result = await delivery.deliver(document, to: target, now: Date(timeIntervalSince1970: time))
        Console.error(result.description)
        switch result {
        case .delivered: return
        case .queued: throw ExitCode(ExitStatus.tempFail)
        case .failed: throw ExitCode(ExitStatus.cannotCreate)
        }
    }
}
