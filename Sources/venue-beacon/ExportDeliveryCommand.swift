import Appliance
import ArgumentParser
import Foundation

extension ExportCommand {
    /// `export --deliver email|directory`: the same path the GPIO button takes.
    func deliverExport(to target: DeliveryTarget, settings: Settings) async throws {
        let time = now.time
        let delivery = ExportDelivery(settings: settings)
        if let problem = await delivery.preflight(target) {
            Console.error(problem)
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let document = try reportingFailures {
            try ExportDocument.fromDiary(settings: settings, share: shareWindow, now: time)
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
