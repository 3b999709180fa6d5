/// Times as people type them on the command line and read them in exports.
public enum TimeText {
    /// Unix seconds (with an optional fraction) or ISO-8601 (`2026-11-22T10:15:00Z`, or with an
    /// offset such as `+01:00`): the same forms a sightings file accepts. Nil for anything else.
    public static func parse(_ text: String) -> Double? {
        SightingsCSV.time(Array(text.utf8)[...])
    }

    /// UTC ISO-8601 with `Z`, whole seconds, as in exports.
    public static func iso8601(_ time: Double) -> String { UTCTime.iso8601(time) }
}
