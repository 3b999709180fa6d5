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

    /// When the live diary commits: check-ins within `commit_seconds`, open visits' progress
    /// every 10 minutes (or `commit_seconds`, if longer).
    public var diaryFlushPolicy: FlushPolicy {
        let live = FlushPolicy.live
        let commit = Double(diary.commitSeconds)
        return FlushPolicy(interval: max(live.interval, commit), maxPendingChanges: live.maxPendingChanges, checkInsWithin: commit)
    }
}
