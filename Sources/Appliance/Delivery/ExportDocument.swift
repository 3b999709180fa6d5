import VenueDiary
import Foundation

/// One export of the diary, ready to be delivered: the CSV exactly as `venue-beacon export
/// --format csv` writes it, plus what the covering email says about it.
public struct ExportDocument: Sendable, Equatable {
    public var venue: VenueIdentity
    /// The share window `[start, end]`.
    public var windowStart: Date
    public var windowEnd: Date
    /// Visits in the CSV.
    public var visits: Int
    /// Visits in the window recorded before the clock was synchronised whose times could not
    /// be corrected (their times may be off by hours).
    public var visitsBeforeClockSync: Int
    /// The CSV bytes (RFC 4180, UTF-8, header row).
    public var csv: Data
    /// When the export was made.
    public var generated: Date
    /// The earliest check-out (or last sighting) among its visits: a copy kept on the node
    /// (the outbox) goes when retention would delete that visit. Nil: no visits.
    public var earliestVisitEnd: Date?

    public init(
        venue: VenueIdentity, windowStart: Date, windowEnd: Date, visits: Int, visitsBeforeClockSync: Int, csv: Data,
        generated: Date, earliestVisitEnd: Date? = nil
    ) {
        self.earliestVisitEnd = earliestVisitEnd
        self.venue = venue
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.visits = visits
        self.visitsBeforeClockSync = visitsBeforeClockSync
        self.csv = csv
        self.generated = generated
    }

    /// `venue-diary-<code>-<from>-<to>.csv`, dates as YYYYMMDD in UTC (the CSV's times are UTC too).
    public var fileName: String {
        "venue-diary-\(venue.code)-\(UTCDate.compact(windowStart))-\(UTCDate.compact(windowEnd)).csv"
    }
}

/// Small UTC date renderings for file names and the email body, without locale surprises.
enum UTCDate {
    static func parts(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return (c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    static func pad(_ n: Int, _ width: Int = 2) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// `20260115`
    static func compact(_ date: Date) -> String {
        let p = parts(date)
        return pad(p.year, 4) + pad(p.month) + pad(p.day)
    }

    /// `2026-01-15 10:00:00 UTC`
    static func readable(_ date: Date) -> String {
        let p = parts(date)
        return "\(pad(p.year, 4))-\(pad(p.month))-\(pad(p.day)) \(pad(p.hour)):\(pad(p.minute)):\(pad(p.second)) UTC"
    }
}
