/// A day of the proleptic Gregorian calendar, and its count of days since 1970-01-01.
///
/// The one place the project turns Unix days into calendar dates and back (with ``CivilTime``
/// for the time of day) (diary exports and
/// sightings files, Herald-format logs), without Foundation's calendars: an export formats two
/// times per visit, a million visits in a few seconds. The conversions are Howard Hinnant's
/// `days_from_civil` and `civil_from_days`, exact for every year.
public struct CivilDate: Equatable, Sendable {
    public var year: Int
    /// 1…12.
    public var month: Int
    /// 1…31.
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01 (before it when negative).
    public init(daysSinceEpoch days: Int) {
        // Days counted from 0000-03-01, in 400-year eras of 146,097 days, years starting in March
        // so that February's leap day ends the year.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01 (negative before it). For a valid date only (see ``isValid``).
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Whether the month is 1…12 and the day exists in it.
    public var isValid: Bool {
        (1...12).contains(month) && (1...Self.daysInMonth(year: year, month: month)).contains(day)
    }

    public static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// Days in `month` (1…12) of `year`.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// A UTC moment in whole seconds as a calendar date and a time of day: the one place Unix
/// seconds are split into days and seconds of the day (export times, sightings files, Herald
/// logs).
public struct CivilTime: Equatable, Sendable {
    public var date: CivilDate
    /// 0…23.
    public var hour: Int
    /// 0…59.
    public var minute: Int
    /// 0…59 (no leap seconds: Unix time has none).
    public var second: Int

    public init(date: CivilDate, hour: Int, minute: Int, second: Int) {
        self.date = date
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The moment `seconds` after 1970-01-01T00:00:00Z (before it when negative).
    public init(unixSeconds seconds: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        date = CivilDate(daysSinceEpoch: days)
        hour = secondOfDay / 3600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    /// Seconds since 1970-01-01T00:00:00Z (negative before it). For a valid date only.
    public var unixSeconds: Int {
        date.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second
    }
}
