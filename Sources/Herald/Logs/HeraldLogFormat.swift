import CivilDate

/// Field formatting shared by the Herald-format logs (herald-for-android `data/*.java`), so that
/// Herald's own analysis scripts (herald-analysis) read this node's logs like a phone's.
public enum HeraldLogFormat {
    /// Herald for Android's timestamp, `yyyy-MM-dd HH:mm:ss.SSSZ` in UTC, e.g.
    /// `2020-11-28 10:15:30.123+0000`, from Unix seconds.
    public static func timestamp(_ unixSeconds: Double) -> String {
        let millis = milliseconds(unixSeconds)
        let ms = (millis % 1000 + 1000) % 1000
        let t = CivilTime(unixSeconds: Int((millis - ms) / 1000))
        return "\(pad(t.date.year, 4))-\(pad(t.date.month, 2))-\(pad(t.date.day, 2)) \(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2)).\(pad(Int(ms), 3))+0000"
    }

    /// A CSV field, quoted when it holds a comma, a double or single quote (`'` or `’`) or a
    /// line break: herald-for-android's `TextFile.csv` rule (R's `read.table` treats `'` as a
    /// quote too), with an inner `"` doubled as RFC 4180 says (Herald leaves it as is).
    public static func csv(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "'" || $0 == "’" || $0 == "\n" || $0 == "\r" }) else {
            return field
        }
        return "\"" + field.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// The fields of one CSV line written by ``csv(_:)`` (quotes removed, doubled quotes undone).
    public static func fields(_ line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = line.makeIterator()
        var pending = iterator.next()
        while let c = pending {
            pending = iterator.next()
            if quoted {
                if c == "\"" {
                    if pending == "\"" {
                        field.append("\"")
                        pending = iterator.next()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(c)
            }
        }
        fields.append(field)
        return fields
    }

    /// Herald's `Proximity.description` for an RSSI measurement: `RSSI:-56.0`, and with a
    /// calibration `RSSI:-56.0[BLETransmitPower:12.0]`.
    public static func proximity(rssi: Int, txPower: Int?) -> String {
        let measured = "RSSI:\(Double(rssi))"
        guard let txPower else { return measured }
        return measured + "[BLETransmitPower:\(Double(txPower))]"
    }

    /// Milliseconds, as Herald's logs keep time: `(t × 1000).rounded()`.
    public static func milliseconds(_ unixSeconds: Double) -> Int64 { Int64((unixSeconds * 1000).rounded()) }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
