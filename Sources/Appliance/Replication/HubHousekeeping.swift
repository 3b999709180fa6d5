import BLETransport
import Foundation

/// What the venue hub does beside taking visits, as a node's edge does: the outbox's retry
/// passes (emails sendmail did not take) and `[export] schedule`, the venue-wide export
/// delivered to every configured target at its scheduled times, on a synchronised clock only.
/// A scheduled time missed while the hub was off runs once at the next start; the last time
/// done is kept beside the hub's signing key (`hub-scheduled-export.state`, 0600), apart from a
/// node's on the same machine.
public final class HubHousekeeping: Sendable {
    let delivery: ExportDelivery
    let job: ExportJob
    let scheduled: ScheduledExport?
    let detector: ClockSyncDetector
    let log: @Sendable (String) -> Void
    let tick: Duration

    public init(
        config: HubConfig, detector: ClockSyncDetector = .system, tick: Duration = .seconds(10), log: @escaping @Sendable (String) -> Void
    ) {
        let delivery = ExportDelivery(settings: config.export, recordingDays: config.diary.recordingDays)
        self.delivery = delivery
        job = ExportJob(delivery: delivery) { now in
            try ExportDocument.fromHub(config: config, now: now, sealing: try ExportSealing.load(config.export))
        }
        let state = ((config.export.signingKey as NSString).deletingLastPathComponent as NSString)
            .appendingPathComponent("hub-scheduled-export.state")
        scheduled = config.export.schedule.map { ScheduledExport(schedule: $0, statePath: state) }
        self.detector = detector
        self.log = log
        self.tick = tick
    }

    /// Runs until cancelled.
    public func run() async {
        var synchronised = false
        while !Task.isCancelled {
            if !synchronised {
                let detector = detector
                synchronised = await DedicatedThread.run(name: "clock-check") { detector.isSynchronized() }
            }
            await pass(now: Date(), synchronised: synchronised)
            try? await Task.sleep(for: tick)
        }
    }

    /// One turn: outbox retries, then a scheduled export if one is due (``run()`` takes one
    /// every `tick`).
    public func pass(now: Date, synchronised: Bool) async {
        let report = await delivery.retryDue(now: now)
        for id in report.delivered { log("outbox: delivered \(id)") }
        for entry in report.failed { log("outbox: \(entry.messageID) still not accepted (attempt \(entry.attempts)): \(entry.lastError ?? "")") }
        for entry in report.expired {
            log("outbox: \(entry.messageID) dropped undelivered after \(entry.attempts) attempts: the visits it carries passed recording_days")
        }
        if let problem = report.problem { log("outbox: \(problem)") }
        guard synchronised, let scheduled, let slot = scheduled.due(now: now) else { return }
        log("schedule: the venue's export due at \(UTCDate.readable(slot))")
        guard let run = await job.runIfIdle() else { return }
        if let problem = run.problem { log("schedule: \(problem)") }
        for (target, result) in run.results { log("schedule: \(target.rawValue): \(result)") }
        do {
            try scheduled.done(slot)
        } catch {
            log("schedule: cannot record the export in \(scheduled.statePath): \(error); it may run again at the next start")
        }
    }
}

