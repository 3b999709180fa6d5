import Foundation
import Replication
import VenueDiary

extension ExportDocument {
    /// Exports a share window from the diary as CSV: the very bytes `venue-beacon export
    /// --format csv` writes for the same window and time, streamed through the sealer (so with
    /// recipients only the age ciphertext is ever held) and signed. `share` defaults to the
    /// configured `share_days`; `.days(0)` is refused (``DiaryError/sharingDisabled``).
    /// Blocking SQLite reads: call it off the cooperative pool.
    public static func fromDiary(settings: Settings, share: ShareWindow? = nil, now: Double, sealing: ExportSealing) throws -> ExportDocument {
        let window = try DiaryExport.window(share ?? settings.diarySettings.shareWindow, now: now)
        let store = try DiaryStore(path: settings.diary.path, readOnly: true)
        return try assemble(venue: settings.venue, window: window, now: now, sealing: sealing) { sink in
            let summary = try DiaryExport.export(
                .csv, from: store, window: window, venue: settings.venue, generatedAt: now,
                abandonedAfter: settings.diarySettings.abandonedAfter, to: sink)
            // "all": the window starts at the oldest visit (or now, for an empty diary).
            return (summary, try window.from ?? store.stats().oldestCheckIn ?? now)
        }
    }

    /// A venue hub's share export (`export --config HUB --deliver`, the hub's schedule): every
    /// node's visits merged across rooms (``HubExport``), as CSV with the `rooms` column.
    public static func fromHub(config: HubConfig, share: ShareWindow? = nil, now: Double, sealing: ExportSealing) throws -> ExportDocument {
        let configured: ShareWindow = config.diary.shareDays.map { .days($0) } ?? .all
        let window = try DiaryExport.window(share ?? configured, now: now)
        guard FileManager.default.fileExists(atPath: config.hub.store) else { throw DiaryError.missing(path: config.hub.store) }
        let store = try HubStore(path: config.hub.store)
        return try assemble(venue: config.venue, window: window, now: now, sealing: sealing) { sink in
            let summary = try HubExport.export(
                .csv, from: store, window: window, venue: config.venue, checkOutSeconds: config.diary.checkOutSeconds,
                generatedAt: now, abandonedAfter: config.abandonedAfter, to: sink)
            return (summary, window.from ?? now)
        }
    }

    /// The document around an export streamed through the sealer by `export` (which returns what
    /// it wrote and where its window starts), signed.
    static func assemble(
        venue: VenueIdentity, window: VisitWindow, now: Double, sealing: ExportSealing,
        export: (_ sink: ([UInt8]) throws -> Void) throws -> (DiaryExport.Summary, Double)
    ) throws -> ExportDocument {
        var content = Data()
        let sealer = try ExportSealer(sealing: sealing) { content.append(contentsOf: $0) }
        let (summary, start) = try export { try sealer.write($0) }
        var document = ExportDocument(
            venue: venue, windowStart: Date(timeIntervalSince1970: start),
            windowEnd: Date(timeIntervalSince1970: window.to ?? now), visits: summary.visits,
            visitsBeforeClockSync: summary.clockUncorrected, content: Data(),
            generated: Date(timeIntervalSince1970: now), earliestVisitEnd: summary.earliestEnd.map(Date.init(timeIntervalSince1970:)),
            sealed: sealing.sealed, nodeKey: sealing.key?.fingerprint)
        document.signature = try sealer.finish(
            trustedComment: trustedComment(
                file: document.fileName, venue: document.venue, nodeKey: document.nodeKey, windowStart: document.windowStart,
                windowEnd: document.windowEnd, visits: document.visits, generated: document.generated),
            untrustedComment: untrustedComment(venue: document.venue, nodeKey: document.nodeKey))
        document.content = content
        return document
    }
}
