import Foundation
import VenueDiary

extension ExportDocument {
    /// Exports a share window from the diary as CSV: the very bytes `venue-beacon export
    /// --format csv` writes for the same window and time. `share` defaults to the configured
    /// `share_days`; `.days(0)` is refused (``DiaryError/sharingDisabled``). Blocking SQLite
    /// reads: call it off the cooperative pool.
    public static func fromDiary(settings: Settings, share: ShareWindow? = nil, now: Double) throws -> ExportDocument {
        let window = try DiaryExport.window(share ?? settings.diarySettings.shareWindow, now: now)
        let store = try DiaryStore(path: settings.diary.path, readOnly: true)
        var csv = Data()
        let summary = try DiaryExport.export(.csv, from: store, window: window, venue: settings.venue, generatedAt: now) {
            csv.append(contentsOf: $0)
        }
        // "all": the window starts at the oldest visit (or now, for an empty diary).
        let start = try window.from ?? store.stats().oldestCheckIn ?? now
        return ExportDocument(
            venue: settings.venue, windowStart: Date(timeIntervalSince1970: start),
            windowEnd: Date(timeIntervalSince1970: window.to ?? now), visits: summary.visits,
            visitsBeforeClockSync: summary.clockUncorrected, csv: csv,
            generated: Date(timeIntervalSince1970: now), earliestVisitEnd: summary.earliestEnd.map(Date.init(timeIntervalSince1970:)))
    }
}
