/// `[diary]`: where visits are kept and how presence becomes a visit (see `VenueDiary.DiarySettings`).
public struct DiaryConfig: Sendable, Equatable {
    /// The SQLite file.
    public var path: String
    /// A visit is checked in once it has lasted strictly longer than this (Herald: 120 s).
    public var checkInSeconds: Int
    /// A visit ends when its phone is unseen for longer than this (Herald: 300 s).
    public var checkOutSeconds: Int
    /// Days a visit is kept after its check-out: nil = forever, 0 = record nothing.
    public var recordingDays: Int?
    /// Days an export covers: nil = everything, 0 = share nothing.
    public var shareDays: Int?
    /// Sightings weaker than this (dBm) do not count as presence.
    public var minRSSI: Int?
    /// A visit that reaches this length is closed and the next sighting opens a new one.
    public var maxVisitHours: Int
    /// A check-in is committed to the card within this many seconds (0: at once).
    public var commitSeconds: Int

    public static let defaultPath = "/var/lib/venue-beacon/diary.sqlite"

    static func read(_ section: ConfigSection) -> DiaryConfig {
        var s = section
        let path = s.string("path", default: defaultPath) {
            $0.hasPrefix("/") && !$0.hasSuffix("/") ? nil : "must be the absolute path of the SQLite file, such as \"\(defaultPath)\""
        } ?? defaultPath
        let checkIn = s.int("check_in_seconds", default: 120, range: 1...86_400, unit: "seconds") ?? 120
        let checkOut = s.int("check_out_seconds", default: 300, range: 1...86_400, unit: "seconds") ?? 300
        let recording: Int?
        switch s.intOrWord("recording_days", range: 0...36_500, words: ["forever"], unit: "days") {
        case .number(let days): recording = days
        case .absent, .word, .invalid: recording = nil
        }
        let share: Int?
        switch s.intOrWord("share_days", range: 0...36_500, words: ["all"], unit: "days") {
        case .number(let days): share = days
        case .absent, .word, .invalid: share = nil
        }
        let minRSSI = s.int("min_rssi", default: nil, range: -127...20, unit: "dBm")
        let maxHours = s.int("max_visit_hours", default: 12, range: 1...168, unit: "hours") ?? 12
        let commit = s.int("commit_seconds", default: 120, range: 0...600, unit: "seconds") ?? 120
        s.finish()
        return DiaryConfig(
            path: path, checkInSeconds: checkIn, checkOutSeconds: checkOut, recordingDays: recording,
            shareDays: share, minRSSI: minRSSI, maxVisitHours: maxHours, commitSeconds: commit)
    }

    var toml: String {
        tomlSection("diary", [
            ("path", TOMLText.quote(path), ""),
            ("check_in_seconds", String(checkInSeconds), ""),
            ("check_out_seconds", String(checkOutSeconds), ""),
            ("recording_days", recordingDays.map(String.init) ?? "\"forever\"", ""),
            ("share_days", shareDays.map(String.init) ?? "\"all\"", ""),
            ("min_rssi", minRSSI.map(String.init), "every sighting counts as presence, however weak"),
            ("max_visit_hours", String(maxVisitHours), ""),
            ("commit_seconds", String(commitSeconds), ""),
        ])
    }
}
