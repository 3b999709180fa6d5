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
