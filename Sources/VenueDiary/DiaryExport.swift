import Foundation

/// Who the export is from: the `[venue]` section of the config file.
public struct VenueIdentity: Sendable, Equatable {
    /// ISO-3166 numeric country code.
    public var country: UInt16
    public var state: UInt16
    public var code: UInt32
    public var name: String
    public var location: String?
    public var area: String?
    public var url: String?

    public init(
        country: UInt16, state: UInt16, code: UInt32, name: String, location: String? = nil,
        area: String? = nil, url: String? = nil
    ) {
        self.country = country
        self.state = state
        self.code = code
        self.name = name
        self.location = location
        self.area = area
        self.url = url
    }
}

/// Share exports for contact tracers: CSV (RFC 4180, UTF-8, CRLF, header row) and JSON.
///
/// Columns, in this order: `visit_id,kind,payload,check_in,check_out,duration_seconds,samples,
/// rssi_max,rssi_mean`. `payload` is lowercase hex; times are UTC ISO-8601 in whole seconds
/// (`2026-11-22T10:15:00Z`, rounded down); `check_out` is empty (JSON null) while the visit is
/// open; `duration_seconds` is the shown check-out (or, while open, the last sighting) minus the
/// shown check-in; `rssi_mean` has one decimal. Visits come oldest check-in first.
///
/// The formatters are pure; ``export(_:from:window:venue:generatedAt:to:)`` streams from the
/// diary through a Row cursor in chunks, so a million visits never sit in memory at once.
public enum DiaryExport {
    public enum Format: String, Sendable, CaseIterable {
        case csv, json
    }

    public static let csvHeader = "visit_id,kind,payload,check_in,check_out,duration_seconds,samples,rssi_max,rssi_mean"

    /// The visits a share export covers at `now`; `.days(0)` refuses with
    /// ``DiaryError/sharingDisabled``.
    public static func window(_ share: ShareWindow, now: Double) throws -> VisitWindow {
        switch share {
        case .all:
            return .all
        case .days(0):
            throw DiaryError.sharingDisabled
        case .days(let days) where days < 0:
            throw DiaryError.invalidSetting(name: "share_days", value: "\(days)", allowed: "a whole number of days ≥ 0, or all")
        case .days(let days):
            return VisitWindow(from: now - Double(days) * 86_400, to: now)
        }
    }

    /// A complete CSV document of `visits`, in the order given.
    public static func csv(_ visits: [Visit]) -> [UInt8] {
        var writer = ExportWriter(format: .csv, venue: nil, window: .all, generatedAt: 0)
        for visit in visits { writer.append(visit) }
        writer.finish()
        return writer.buffer
    }

    /// A complete JSON document of `visits`, in the order given.
    public static func json(_ visits: [Visit], venue: VenueIdentity, window: VisitWindow, generatedAt: Double) -> [UInt8] {
        var writer = ExportWriter(format: .json, venue: venue, window: window, generatedAt: generatedAt)
        for visit in visits { writer.append(visit) }
        writer.finish()
        return writer.buffer
    }

    /// Streams the visits overlapping `window` from the diary to `sink`, in chunks of about
    /// 64 KiB. Returns the number of visits exported.
    @discardableResult
    public static func export(
        _ format: Format, from store: DiaryStore, window: VisitWindow, venue: VenueIdentity, generatedAt: Double,
        to sink: ([UInt8]) throws -> Void
    ) throws -> Int {
        var writer = ExportWriter(format: format, venue: venue, window: window, generatedAt: generatedAt)
        try store.forEachVisit(in: window) { visit in
            writer.append(visit)
            if writer.buffer.count >= ExportWriter.chunkSize {
                try sink(writer.buffer)
                writer.buffer.removeAll(keepingCapacity: true)
            }
        }
        writer.finish()
        try sink(writer.buffer)
        return writer.count
    }

    /// Streams an export to a file handle (a file, or standard output for `--output -`).
    @discardableResult
    public static func export(
        _ format: Format, from store: DiaryStore, window: VisitWindow, venue: VenueIdentity, generatedAt: Double,
        to handle: FileHandle
    ) throws -> Int {
        try export(format, from: store, window: window, venue: venue, generatedAt: generatedAt) { chunk in
            try handle.write(contentsOf: chunk)
        }
    }
}

/// Formats an export document piece by piece into a byte buffer.
struct ExportWriter {
    static let chunkSize = 64 * 1024

    let format: DiaryExport.Format
    var buffer: [UInt8] = []
    private(set) var count = 0

    init(format: DiaryExport.Format, venue: VenueIdentity?, window: VisitWindow, generatedAt: Double) {
        self.format = format
        buffer.reserveCapacity(Self.chunkSize + 1024)
        switch format {
        case .csv:
            buffer.append(contentsOf: DiaryExport.csvHeader.utf8)
            buffer.append(contentsOf: [13, 10])
        case .json:
            buffer.append(contentsOf: "{\n  \"venue\": ".utf8)
            appendVenue(venue)
            buffer.append(contentsOf: ",\n  \"window\": {\"from\": ".utf8)
            appendTime(window.from)
            buffer.append(contentsOf: ", \"to\": ".utf8)
            appendTime(window.to)
            buffer.append(contentsOf: "},\n  \"generated_at\": ".utf8)
            appendTime(generatedAt)
            buffer.append(contentsOf: ",\n  \"visits\": [".utf8)
        }
    }

    mutating func append(_ visit: Visit) {
        let checkIn = UTCTime.wholeSeconds(visit.checkIn)
        let end = UTCTime.wholeSeconds(visit.checkOut ?? visit.lastSeen)
        switch format {
        case .csv:
            ASCII.appendInteger(Int(visit.id ?? 0), to: &buffer)
            buffer.append(UInt8(ascii: ","))
            buffer.append(contentsOf: visit.kind.rawValue.utf8)
            buffer.append(UInt8(ascii: ","))
            ASCII.appendHex(visit.payload, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            UTCTime.appendISO8601(checkIn, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            if visit.checkOut != nil { UTCTime.appendISO8601(end, to: &buffer) }
            buffer.append(UInt8(ascii: ","))
            ASCII.appendInteger(end - checkIn, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            ASCII.appendInteger(visit.samples, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            ASCII.appendInteger(visit.rssiMax, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            ASCII.appendOneDecimal(numerator: visit.rssiSum, denominator: visit.samples, to: &buffer)
            buffer.append(contentsOf: [13, 10])
        case .json:
            buffer.append(contentsOf: (count == 0 ? "\n    {\"visit_id\": " : ",\n    {\"visit_id\": ").utf8)
            ASCII.appendInteger(Int(visit.id ?? 0), to: &buffer)
            buffer.append(contentsOf: ", \"kind\": \"".utf8)
            buffer.append(contentsOf: visit.kind.rawValue.utf8)
            buffer.append(contentsOf: "\", \"payload\": \"".utf8)
            ASCII.appendHex(visit.payload, to: &buffer)
            buffer.append(contentsOf: "\", \"check_in\": ".utf8)
            appendTime(visit.checkIn)
            buffer.append(contentsOf: ", \"check_out\": ".utf8)
            appendTime(visit.checkOut)
            buffer.append(contentsOf: ", \"duration_seconds\": ".utf8)
            ASCII.appendInteger(end - checkIn, to: &buffer)
            buffer.append(contentsOf: ", \"samples\": ".utf8)
            ASCII.appendInteger(visit.samples, to: &buffer)
            buffer.append(contentsOf: ", \"rssi_max\": ".utf8)
            ASCII.appendInteger(visit.rssiMax, to: &buffer)
            buffer.append(contentsOf: ", \"rssi_mean\": ".utf8)
            ASCII.appendOneDecimal(numerator: visit.rssiSum, denominator: visit.samples, to: &buffer)
            buffer.append(UInt8(ascii: "}"))
        }
        count += 1
    }

    mutating func finish() {
        if format == .json {
            buffer.append(contentsOf: (count == 0 ? "]\n}\n" : "\n  ]\n}\n").utf8)
        }
    }

    private mutating func appendVenue(_ venue: VenueIdentity?) {
        guard let venue else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        buffer.append(contentsOf: "{\"country\": ".utf8)
        ASCII.appendInteger(Int(venue.country), to: &buffer)
        buffer.append(contentsOf: ", \"state\": ".utf8)
        ASCII.appendInteger(Int(venue.state), to: &buffer)
        buffer.append(contentsOf: ", \"code\": ".utf8)
        ASCII.appendInteger(Int(venue.code), to: &buffer)
        for (name, value) in [("name", venue.name), ("location", venue.location), ("area", venue.area), ("url", venue.url)] {
            buffer.append(contentsOf: ", \"\(name)\": ".utf8)
            appendString(value)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    private mutating func appendTime(_ time: Double?) {
        guard let time else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        buffer.append(UInt8(ascii: "\""))
        UTCTime.appendISO8601(UTCTime.wholeSeconds(time), to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    /// A JSON string literal (RFC 8259 escaping), or null.
    private mutating func appendString(_ value: String?) {
        guard let value else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        buffer.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): buffer.append(contentsOf: "\\\\".utf8)
            case 0x0A: buffer.append(contentsOf: "\\n".utf8)
            case 0x0D: buffer.append(contentsOf: "\\r".utf8)
            case 0x09: buffer.append(contentsOf: "\\t".utf8)
            case 0x00..<0x20:
                buffer.append(contentsOf: "\\u00".utf8)
                ASCII.appendHex([byte], to: &buffer)
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
