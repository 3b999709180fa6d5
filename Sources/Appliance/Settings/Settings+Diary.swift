import VenueDiary

extension Settings {
    /// The diary's behaviour as the `[diary]` section sets it.
    public var diarySettings: DiarySettings {
        DiarySettings(
            checkInSeconds: Double(diary.checkInSeconds),
            checkOutSeconds: Double(diary.checkOutSeconds),
            minRSSI: diary.minRSSI,
            maxVisitSeconds: Double(diary.maxVisitHours) * 3600,
            recordingDays: diary.recordingDays,
            shareWindow: diary.shareDays.map { .days($0) } ?? .all)
    }

    /// The venue as exports name it.
    public var venueIdentity: VenueIdentity {
        VenueIdentity(
            country: venue.country, state: venue.state, code: venue.code, name: venue.name,
            location: venue.location, area: venue.area, url: venue.url)
    }
}
