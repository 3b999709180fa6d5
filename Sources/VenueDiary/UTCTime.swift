/// UTC calendar arithmetic for exports and sightings files, without Foundation formatters
/// (an export formats two times per visit, a million visits in a few seconds).
enum UTCTime {
    /// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count since 1970-01-01 (Hinnant's civil_from_days).
    static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Whole seconds of a time, rounded down (exports show whole seconds).
    static func wholeSeconds(_ time: Double) -> Int {
        guard time.isFinite else { return 0 }
        return Int(max(min(time, 9e15), -9e15).rounded(.down))
    }

    /// Appends `YYYY-MM-DDTHH:MM:SSZ`.
    static func appendISO8601(_ seconds: Int, to out: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = date(days: days)
        appendPadded(year, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(month, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(day, width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendPadded(secondOfDay / 3600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay / 60 % 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    static func iso8601(_ time: Double) -> String {
        var out: [UInt8] = []
        appendISO8601(wholeSeconds(time), to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendPadded(_ value: Int, width: Int, to out: inout [UInt8]) {
        if value < 0 {
            out.append(UInt8(ascii: "-"))
            appendPadded(-value, width: width, to: &out)
            return
        }
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 1 && value < divisor {
            out.append(UInt8(ascii: "0"))
            divisor /= 10
        }
        ASCII.appendInteger(value, to: &out)
    }
}

/// Byte-level text helpers shared by the exporters and the sightings parser.
enum ASCII {
    static func appendInteger(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = out.count
        repeat {
            out.append(UInt8(truncatingIfNeeded: 48 + magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }

    /// Appends `numerator / denominator` rounded half away from zero to one decimal, e.g. `-61.7`.
    static func appendOneDecimal(numerator: Int, denominator: Int, to out: inout [UInt8]) {
        guard denominator > 0 else {
            out.append(contentsOf: "0.0".utf8)
            return
        }
        let tenths = (2 * (numerator * 10).magnitude + UInt(denominator)) / (2 * UInt(denominator))
        if numerator < 0 && tenths > 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(Int(tenths / 10), to: &out)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(truncatingIfNeeded: 48 + tenths % 10))
    }

    /// Appends bytes as lowercase hex. (VenueDiary depends on GRDB alone, so it cannot use
    /// BLEHost's `Hex`; this writes into the export buffer without an intermediate String.)
    static func appendHex(_ bytes: [UInt8], to out: inout [UInt8]) {
        for byte in bytes {
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0F))
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 48 + nibble : 87 + nibble
    }

    /// The value of a hex digit, or nil.
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
