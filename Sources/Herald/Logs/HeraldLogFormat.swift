/// Field formatting shared by the Herald-format logs (herald-for-android `data/*.java`), so that
/// Herald's own analysis scripts (herald-analysis) read this node's logs like a phone's.
public enum HeraldLogFormat {
    /// Herald for Android's timestamp, `yyyy-MM-dd HH:mm:ss.SSSZ` in UTC, e.g.
    /// `2020-11-28 10:15:30.123+0000`, from Unix seconds.
    public static func timestamp(_ unixSeconds: Double) -> String {
        let millis = Int64((unixSeconds * 1000).rounded())
        var days = millis / 86_400_000
        var rest = millis % 86_400_000
        if rest < 0 {
            rest += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let ms = rest % 1000, s = rest / 1000 % 60, m = rest / 60_000 % 60, h = rest / 3_600_000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2)).\(pad(ms, 3))+0000"
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break.
    public static func csv(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// Herald's `Proximity.description` for an RSSI measurement: `RSSI:-56.0`.
    public static func rssi(_ value: Int) -> String { "RSSI:\(Double(value))" }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian; H. Hinnant's
    /// `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
