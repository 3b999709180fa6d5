/// UTC times as exports show them, without Foundation formatters (an export formats two times
/// per visit, a million visits in a few seconds); calendar dates come from ``CivilDate``.
enum UTCTime {
    /// The latest time an export shows: 9999-12-31T23:59:59Z.
    static let latestSecond = 253_402_300_799

    /// Whole seconds of a time, rounded down and kept within 1970…9999 (exports show whole
    /// seconds in four-digit years).
    static func wholeSeconds(_ time: Double) -> Int {
        guard time.isFinite else { return 0 }
        return Int(max(0, min(time, Double(latestSecond))).rounded(.down))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of a time, as exports show it.
    static func iso8601(_ time: Double) -> String {
        var bytes: [UInt8] = []
        bytes.write(upTo: TextWriter.timeBytes) { $0.time(wholeSeconds(time)) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
