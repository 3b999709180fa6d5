import VenueDiary
import Foundation

/// One export of the diary, ready to be delivered: the CSV exactly as `venue-beacon export
/// --format csv` writes it (sealed to the contact tracers' age keys when any are configured),
/// its minisign signature, and what the covering email says about it.
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
    /// The file delivered: the CSV (RFC 4180, UTF-8, header row), or its age encryption when
    /// `sealed` (then the plaintext was never held whole, nor written anywhere).
    public var content: Data
    /// `content` is an age file.
    public var sealed: Bool
    /// The `.minisig` file signing `content` with the node's key (nil: unsigned).
    public var signature: String?
    /// The fingerprint of the node key that signed it.
    public var nodeKey: String?
    /// When the export was made.
    public var generated: Date
    /// The earliest check-out (or last sighting) among its visits: a copy kept on the node
    /// (the outbox) goes when retention would delete that visit. Nil: no visits.
    public var earliestVisitEnd: Date?

    public init(
        venue: VenueIdentity, windowStart: Date, windowEnd: Date, visits: Int, visitsBeforeClockSync: Int, content: Data,
        generated: Date, earliestVisitEnd: Date? = nil, sealed: Bool = false, signature: String? = nil, nodeKey: String? = nil
    ) {
        self.sealed = sealed
        self.signature = signature
        self.nodeKey = nodeKey
        self.earliestVisitEnd = earliestVisitEnd
        self.venue = venue
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.visits = visits
        self.visitsBeforeClockSync = visitsBeforeClockSync
        self.content = content
        self.generated = generated
    }

    /// `venue-diary-<code>-<from>-<to>.csv`, dates as YYYYMMDD in UTC (the CSV's times are UTC
    /// too), with `.age` when sealed.
    public var fileName: String {
        "venue-diary-\(venue.code)-\(UTCDate.compact(windowStart))-\(UTCDate.compact(windowEnd)).csv" + (sealed ? ".age" : "")
    }

    /// `FILE.minisig`, as minisign looks for it.
    public var signatureFileName: String { fileName + ".minisig" }

    /// The signature's trusted comment (covered by the signature): when, which file, which
    /// venue and node, which window, how many visits (and, for an export of the visits that
    /// matched diagnosis keys, in how many exposure windows); tab-separated `key:value`, as
    /// minisign's own.
    public static func trustedComment(
        file: String, venue: VenueIdentity, nodeKey: String?, windowStart: Date, windowEnd: Date, visits: Int, generated: Date,
        exposureWindows: Int? = nil
    ) -> String {
        var fields = ["timestamp:\(Int(generated.timeIntervalSince1970))", "file:\(file)", "venue:\(venue.code)"]
        if let nodeKey { fields.append("node:\(nodeKey.replacingOccurrences(of: " ", with: ""))") }
        fields.append("window:\(UTCDate.iso(windowStart))/\(UTCDate.iso(windowEnd))")
        fields.append("visits:\(visits)")
        if let exposureWindows { fields.append("exposure_windows:\(exposureWindows)") }
        return fields.joined(separator: "\t")
    }

    /// The untrusted comment: for people, not verified.
    public static func untrustedComment(venue: VenueIdentity, nodeKey: String?) -> String {
        "signature from venue-beacon node of venue \(venue.code)" + (nodeKey.map { ", key fingerprint " + $0 } ?? "")
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

    /// `2026-01-15T10:00:00Z`
    static func iso(_ date: Date) -> String {
        let p = parts(date)
        return "\(pad(p.year, 4))-\(pad(p.month))-\(pad(p.day))T\(pad(p.hour)):\(pad(p.minute)):\(pad(p.second))Z"
    }

    /// `2026-01-15 10:00:00 UTC`
    static func readable(_ date: Date) -> String {
        let p = parts(date)
        return "\(pad(p.year, 4))-\(pad(p.month))-\(pad(p.day)) \(pad(p.hour)):\(pad(p.minute)):\(pad(p.second)) UTC"
    }
}
