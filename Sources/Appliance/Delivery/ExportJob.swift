import Foundation

/// The export the button (and SIGUSR1) triggers: the share window, exported once and delivered
/// to every configured target, with the export LED told when it starts and how it ended. One
/// at a time: a trigger while an export runs is ignored.
public actor ExportJob {
    public typealias MakeDocument = @Sendable (_ now: Double) throws -> ExportDocument

    private let delivery: ExportDelivery
    private let indicator: (any ExportIndicator)?
    private let makeDocument: MakeDocument
    private let prepare: @Sendable () async -> Void
    private let clock: @Sendable () -> Date
    private var running = false

    /// What one triggered export did.
    public struct Run: Sendable, Equatable {
        public var results: [(target: DeliveryTarget, result: DeliveryResult)]
        /// Why nothing was delivered before any target was tried (no target configured, the
        /// diary could not be read).
        public var problem: String?

        /// Every target delivered (a queued email is not delivered yet).
        public var succeeded: Bool { problem == nil && !results.isEmpty && results.allSatisfy { $0.result.delivered } }

        public static func == (a: Run, b: Run) -> Bool {
            a.problem == b.problem && a.results.map(\.target) == b.results.map(\.target) && a.results.map(\.result) == b.results.map(\.result)
        }
    }

    /// `makeDocument` defaults to the configured share window from the diary; `prepare` runs
    /// first (the running service writes what its diary holds: ``DiaryFlusher``).
    public init(
        settings: Settings, delivery: ExportDelivery, indicator: (any ExportIndicator)?, makeDocument: MakeDocument? = nil,
        prepare: @escaping @Sendable () async -> Void = {}, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.delivery = delivery
        self.indicator = indicator
        self.prepare = prepare
        self.makeDocument = makeDocument ?? { now in
            try ExportDocument.fromDiary(settings: settings, now: now, sealing: try ExportSealing.load(settings.export))
        }
        self.clock = clock
    }

    /// An export job for documents `makeDocument` builds (a venue hub's, say).
    public init(
        delivery: ExportDelivery, makeDocument: @escaping MakeDocument, clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.delivery = delivery
        self.indicator = nil
        self.prepare = {}
        self.makeDocument = makeDocument
        self.clock = clock
    }

    /// Runs one export unless one is already running (then returns nil at once).
    public func runIfIdle() async -> Run? {
        guard !running else { return nil }
        running = true
        defer { running = false }
        indicator?.exportStarted()
        let run = await perform()
        indicator?.exportFinished(success: run.succeeded)
        return run
    }

    private func perform() async -> Run {
        let targets = delivery.configuredTargets
        guard !targets.isEmpty else {
            return Run(results: [], problem: "nothing to deliver to: set export.email and/or export.directory")
        }
        await prepare()
        let now = clock()
        let make = makeDocument
        // SQLite reads block: a queue of their own, not the cooperative pool.
        let document: Result<ExportDocument, any Error> = await withCheckedContinuation { continuation in
            DispatchQueue(label: "venue-beacon.export").async {
                continuation.resume(returning: Result { try make(now.timeIntervalSince1970) })
            }
        }
        switch document {
        case .failure(let error):
            return Run(results: [], problem: "the export failed: \(error)")
        case .success(let document):
            var results: [(target: DeliveryTarget, result: DeliveryResult)] = []
            for target in targets {
                results.append((target, await delivery.deliver(document, to: target, now: now)))
            }
            return Run(results: results, problem: nil)
        }
    }
}
