import Foundation
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
        var content = Data()
        let sealer = try ExportSealer(sealing: sealing) { content.append(contentsOf: $0) }
        let summary = try DiaryExport.export(
            .csv, from: store, window: window, venue: settings.venue, generatedAt: now,
            abandonedAfter: settings.diarySettings.abandonedAfter
        ) {
            try sealer.write($0)
        }
        // "all": the window starts at the oldest visit (or now, for an empty diary).
        let start = try window.from ?? store.stats().oldestCheckIn ?? now
        var document = ExportDocument(
            venue: settings.venue, windowStart: Date(timeIntervalSince1970: start),
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
