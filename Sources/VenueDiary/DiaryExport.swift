import Foundation
import GRDB

/// The venue: who the export is from, and what the node advertises as a Herald venue beacon
/// (the config file's `[venue]` section).
public struct VenueIdentity: Sendable, Equatable {
    /// ISO-3166-1 numeric country code (826 = United Kingdom).
    public var country: UInt16
    /// State or authority code within the country (0 = national).
    public var state: UInt16
    /// Venue code, unique within (country, state).
    public var code: UInt32
    /// Premises name (Herald extended data 0x10).
    public var name: String
    /// Location within the premises (0x11), e.g. "Window seating".
    public var location: String?
    /// Area disambiguation (0x12), e.g. the town.
    public var area: String?
    /// https URL of the venue (0x13).
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

/// One room's part of a venue-wide visit (a hub export): one node's visit of the identity.
public struct RoomSegment: Sendable, Equatable {
    /// The node's name.
    public var room: String
    public var checkIn: Double
    /// Nil while the node's visit is open.
    public var checkOut: Double?
    public var lastSeen: Double
    public var samples: Int
    /// Meaningless when `samples` is 0.
    public var rssiMax: Int
    public var rssiSum: Int

    public init(
        room: String, checkIn: Double, checkOut: Double?, lastSeen: Double, samples: Int, rssiMax: Int, rssiSum: Int
    ) {
        self.room = room
        self.checkIn = checkIn
        self.checkOut = checkOut
        self.lastSeen = lastSeen
        self.samples = samples
        self.rssiMax = rssiMax
        self.rssiSum = rssiSum
    }
}

/// A visit to the venue as a whole (a hub export): one identity's visits in several rooms
/// merged into one, with the rooms it was seen in and each room's part.
public struct VenueVisit: Sendable, Equatable {
    /// The merged visit (its `id` the hub's id of its earliest segment).
    public var visit: Visit
    /// Distinct rooms, in the order the identity was first seen in each.
    public var rooms: [String]
    /// The rooms' visits, by check-in.
    public var segments: [RoomSegment]

    public init(visit: Visit, rooms: [String], segments: [RoomSegment]) {
        self.visit = visit
        self.rooms = rooms
        self.segments = segments
    }
}

/// Share exports for contact tracers: CSV (RFC 4180, UTF-8, CRLF, header row) and JSON.
///
/// Columns, in this order: `visit_id,kind,payload,check_in,check_out,duration_seconds,samples,
/// rssi_max,rssi_mean,clock_uncorrected,shared_identifier`. `payload` is lowercase hex; times are UTC ISO-8601 in whole seconds
/// (`2026-11-22T10:15:00Z`, rounded down); `check_out` is empty (JSON null) while the visit is
/// open; `duration_seconds` is the shown check-out (or, while open, the last sighting) minus the
/// shown check-in; `samples` counts RSSI measurements; `rssi_mean` has one decimal; `rssi_max`
/// and `rssi_mean` are empty (JSON null) for a visit seen without any measurement (a controller
/// that reports no RSSI, a phone that only wrote to the node); `clock_uncorrected` is 1 (JSON
/// true) for a visit recorded before the system clock was synchronised whose times could not be
/// corrected (they may be off by hours), else 0; `shared_identifier` is 1 (JSON true) for a
/// visit whose identifier two or more devices carried at once (the visit may be several people:
/// ``Visit/sharedIdentity``), else 0. JSON also counts those visits in
/// `visits_clock_uncorrected` and `visits_shared_identifier`. Visits come oldest check-in first.
///
/// A venue hub's export (``export(_:venueVisits:window:venue:generatedAt:nodeKey:to:)``) has
/// one more CSV column, `rooms` (the room names joined by `;`), and in JSON each visit gains
/// `rooms` (an array of names) and `segments` (each room's part: `room`, `check_in`,
/// `check_out`, `samples`, `rssi_max`, `rssi_mean`, as for a visit).
///
/// The formatters are pure; ``export(_:from:window:venue:generatedAt:to:)`` streams from the
/// diary through a row cursor in chunks, so a million visits never sit in memory at once.
public enum DiaryExport {
    public enum Format: String, Sendable, CaseIterable {
        case csv, json
    }

    public static let csvHeader =
        "visit_id,kind,payload,check_in,check_out,duration_seconds,samples,rssi_max,rssi_mean,clock_uncorrected,shared_identifier"

    /// The header of a venue hub's CSV export.
    public static let venueCSVHeader = csvHeader + ",rooms"

    /// What an export wrote.
    public struct Summary: Sendable, Equatable {
        public var visits: Int
        /// Visits whose times could not be corrected to a synchronised clock.
        public var clockUncorrected: Int
        /// Visits whose identifier two or more devices carried at once.
        public var sharedIdentifier: Int = 0
        /// The earliest end (check-out, or last sighting while open) of the exported visits: the
        /// first of them that retention deletes goes at this time plus `recording_days`, and a
        /// copy of the export held on the node (the outbox) must not outlive it. Nil: no visits.
        public var earliestEnd: Double? = nil
    }

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
    /// 64 KiB. Returns what it exported.
    @discardableResult
    public static func export(
        _ format: Format, from store: DiaryStore, window: VisitWindow, venue: VenueIdentity, generatedAt: Double,
        nodeKey: String? = nil, abandonedAfter: Double? = nil, to sink: ([UInt8]) throws -> Void
    ) throws -> Summary {
        var writer = ExportWriter(format: format, venue: venue, window: window, generatedAt: generatedAt, nodeKey: nodeKey)
        writer.closesOpenBefore = abandonedAfter.map { generatedAt - $0 }
        try store.forEachRow(in: window) { row in
            try writer.append(row: row)
            if writer.buffer.count >= ExportWriter.chunkSize {
                try sink(writer.buffer)
                writer.buffer.removeAll(keepingCapacity: true)
            }
        }
        writer.finish()
        try sink(writer.buffer)
        return Summary(
            visits: writer.count, clockUncorrected: writer.clockUncorrected, sharedIdentifier: writer.sharedIdentifier,
            earliestEnd: writer.earliestEnd)
    }

    /// Writes venue-wide visits (a venue hub's export), in the order given, to `sink` in chunks
    /// of about 64 KiB. Returns what it exported.
    @discardableResult
    public static func export(
        _ format: Format, venueVisits: some Sequence<VenueVisit>, window: VisitWindow, venue: VenueIdentity,
        generatedAt: Double, nodeKey: String? = nil, abandonedAfter: Double? = nil, to sink: ([UInt8]) throws -> Void
    ) throws -> Summary {
        var writer = ExportWriter(
            format: format, venue: venue, window: window, generatedAt: generatedAt, nodeKey: nodeKey, rooms: true)
        writer.closesOpenBefore = abandonedAfter.map { generatedAt - $0 }
        for visit in venueVisits {
            writer.append(visit)
            if writer.buffer.count >= ExportWriter.chunkSize {
                try sink(writer.buffer)
                writer.buffer.removeAll(keepingCapacity: true)
            }
        }
        writer.finish()
        try sink(writer.buffer)
        return Summary(
            visits: writer.count, clockUncorrected: writer.clockUncorrected, sharedIdentifier: writer.sharedIdentifier,
            earliestEnd: writer.earliestEnd)
    }
}

/// Formats an export document piece by piece into a byte buffer.
struct ExportWriter {
    static let chunkSize = 64 * 1024

    let format: DiaryExport.Format
    var buffer: [UInt8] = []
    private(set) var count = 0
    private(set) var clockUncorrected = 0
    private(set) var sharedIdentifier = 0
    private(set) var earliestEnd: Double?

    /// JSON only: the fingerprint of the node key that signs the export.
    let nodeKey: String?
    /// A venue hub's export: every visit has rooms and segments (``VenueVisit``).
    let rooms: Bool
    /// An open visit last seen before this time is shown closed at its last sighting: it was
    /// abandoned (``DiarySettings/abandonedAfter``: an interrupted replay, a node that died), not
    /// present now. Nil: open visits are shown open.
    var closesOpenBefore: Double?

    init(
        format: DiaryExport.Format, venue: VenueIdentity?, window: VisitWindow, generatedAt: Double, nodeKey: String? = nil,
        rooms: Bool = false
    ) {
        self.format = format
        self.nodeKey = nodeKey
        self.rooms = rooms
        buffer.reserveCapacity(Self.chunkSize + 4096)
        switch format {
        case .csv:
            buffer.append(contentsOf: (rooms ? DiaryExport.venueCSVHeader : DiaryExport.csvHeader).utf8)
            buffer.append(contentsOf: [13, 10])
        case .json:
            let strings = [venue?.name, venue?.location, venue?.area, venue?.url].reduce(0) { $0 + ($1?.utf8.count ?? 0) }
            buffer.write(upTo: 512 + 6 * (strings + (nodeKey?.utf8.count ?? 0))) { out in
                out.text("{\n  \"venue\": ")
                if let venue {
                    out.text("{\"country\": ")
                    out.integer(Int(venue.country))
                    out.text(", \"state\": ")
                    out.integer(Int(venue.state))
                    out.text(", \"code\": ")
                    out.integer(Int(venue.code))
                    out.text(", \"name\": ")
                    out.jsonString(venue.name)
                    out.text(", \"location\": ")
                    out.jsonString(venue.location)
                    out.text(", \"area\": ")
                    out.jsonString(venue.area)
                    out.text(", \"url\": ")
                    out.jsonString(venue.url)
                    out.text("}")
                } else {
                    out.text("null")
                }
                out.text(",\n  \"window\": {\"from\": ")
                out.jsonTime(window.from)
                out.text(", \"to\": ")
                out.jsonTime(window.to)
                out.text("},\n  \"generated_at\": ")
                out.jsonTime(generatedAt)
                if let nodeKey {
                    out.text(",\n  \"node_key\": ")
                    out.jsonString(nodeKey)
                }
                out.text(",\n  \"visits\": [")
            }
        }
    }

    mutating func append(_ visit: Visit) {
        visit.payload.withUnsafeBytes { payload in
            append(
                id: Int(visit.id ?? 0), kind: visit.kind.rawValue, payload: payload, checkIn: visit.checkIn,
                lastSeen: visit.lastSeen, checkOut: visit.checkOut, samples: visit.samples, rssiMax: visit.rssiMax,
                rssiSum: visit.rssiSum, clockUncorrected: visit.clockUncorrected, sharedIdentity: visit.sharedIdentity)
        }
    }

    /// A venue-wide visit (a hub export's writer only).
    mutating func append(_ venueVisit: VenueVisit) {
        assert(rooms, "a venue-wide visit in a node export")
        let visit = venueVisit.visit
        visit.payload.withUnsafeBytes { payload in
            append(
                id: Int(visit.id ?? 0), kind: visit.kind.rawValue, payload: payload, checkIn: visit.checkIn,
                lastSeen: visit.lastSeen, checkOut: visit.checkOut, samples: visit.samples, rssiMax: visit.rssiMax,
                rssiSum: visit.rssiSum, clockUncorrected: visit.clockUncorrected, sharedIdentity: visit.sharedIdentity,
                rooms: venueVisit.rooms,
                segments: venueVisit.segments)
        }
    }

    /// One visit's fields; the payload may point straight into an SQLite row. `rooms` and
    /// `segments` are written by a hub's writer only (``rooms``).
    mutating func append(
        id: Int, kind: String, payload: UnsafeRawBufferPointer, checkIn: Double, lastSeen: Double, checkOut: Double?,
        samples: Int, rssiMax: Int, rssiSum: Int, clockUncorrected: Bool, sharedIdentity: Bool, rooms: [String] = [],
        segments: [RoomSegment] = []
    ) {
        let shownCheckIn = UTCTime.wholeSeconds(checkIn)
        let checkOut = checkOut ?? closesOpenBefore.flatMap { lastSeen < $0 ? lastSeen : nil }
        let shownEnd = UTCTime.wholeSeconds(checkOut ?? lastSeen)
        let first = count == 0
        let format = format
        let venueWide = self.rooms
        // Rooms: a JSON string each (6 bytes a byte, quotes, separator) or a quoted CSV field
        // (2 bytes a byte); a segment: its room as a JSON string and at most 200 more bytes.
        var extra = 0
        for room in rooms { extra += 6 * room.utf8.count + 8 }
        for segment in segments { extra += 6 * segment.room.utf8.count + 256 }
        buffer.write(upTo: 512 + 6 * kind.utf8.count + 2 * payload.count + extra) { out in
            switch format {
            case .csv:
                out.integer(id)
                out.byte(UInt8(ascii: ","))
                out.text(kind)
                out.byte(UInt8(ascii: ","))
                out.hex(payload)
                out.byte(UInt8(ascii: ","))
                out.time(shownCheckIn)
                out.byte(UInt8(ascii: ","))
                if checkOut != nil { out.time(shownEnd) }
                out.byte(UInt8(ascii: ","))
                out.integer(shownEnd - shownCheckIn)
                out.byte(UInt8(ascii: ","))
                out.integer(samples)
                out.byte(UInt8(ascii: ","))
                if samples > 0 {
                    out.integer(rssiMax)
                    out.byte(UInt8(ascii: ","))
                    out.oneDecimal(numerator: rssiSum, denominator: samples)
                } else {
                    out.byte(UInt8(ascii: ","))
                }
                out.byte(UInt8(ascii: ","))
                out.byte(clockUncorrected ? UInt8(ascii: "1") : UInt8(ascii: "0"))
                out.byte(UInt8(ascii: ","))
                out.byte(sharedIdentity ? UInt8(ascii: "1") : UInt8(ascii: "0"))
                if venueWide {
                    out.byte(UInt8(ascii: ","))
                    out.csvField(rooms.joined(separator: ";"))
                }
                out.byte(13)
                out.byte(10)
            case .json:
                out.text(first ? "\n    {\"visit_id\": " : ",\n    {\"visit_id\": ")
                out.integer(id)
                out.text(", \"kind\": ")
                out.jsonString(kind)
                out.text(", \"payload\": \"")
                out.hex(payload)
                out.text("\", \"check_in\": ")
                out.jsonTime(checkIn)
                out.text(", \"check_out\": ")
                out.jsonTime(checkOut)
                out.text(", \"duration_seconds\": ")
                out.integer(shownEnd - shownCheckIn)
                out.text(", \"samples\": ")
                out.integer(samples)
                if samples > 0 {
                    out.text(", \"rssi_max\": ")
                    out.integer(rssiMax)
                    out.text(", \"rssi_mean\": ")
                    out.oneDecimal(numerator: rssiSum, denominator: samples)
                } else {
                    out.text(", \"rssi_max\": null, \"rssi_mean\": null")
                }
                out.text(clockUncorrected ? ", \"clock_uncorrected\": true" : ", \"clock_uncorrected\": false")
                out.text(sharedIdentity ? ", \"shared_identifier\": true" : ", \"shared_identifier\": false")
                if venueWide {
                    out.text(", \"rooms\": [")
                    for (index, room) in rooms.enumerated() {
                        if index > 0 { out.text(", ") }
                        out.jsonString(room)
                    }
                    out.text("], \"segments\": [")
                    for (index, segment) in segments.enumerated() {
                        out.text(index == 0 ? "{\"room\": " : ", {\"room\": ")
                        out.jsonString(segment.room)
                        out.text(", \"check_in\": ")
                        out.jsonTime(segment.checkIn)
                        out.text(", \"check_out\": ")
                        out.jsonTime(segment.checkOut)
                        out.text(", \"samples\": ")
                        out.integer(segment.samples)
                        if segment.samples > 0 {
                            out.text(", \"rssi_max\": ")
                            out.integer(segment.rssiMax)
                            out.text(", \"rssi_mean\": ")
                            out.oneDecimal(numerator: segment.rssiSum, denominator: segment.samples)
                        } else {
                            out.text(", \"rssi_max\": null, \"rssi_mean\": null")
                        }
                        out.byte(UInt8(ascii: "}"))
                    }
                    out.byte(UInt8(ascii: "]"))
                }
                out.byte(UInt8(ascii: "}"))
            }
        }
        count += 1
        if clockUncorrected { self.clockUncorrected += 1 }
        if sharedIdentity { self.sharedIdentifier += 1 }
        let end = checkOut ?? lastSeen
        if end < earliestEnd ?? .infinity { earliestEnd = end }
    }

    /// A stored visit, read without copying its payload.
    mutating func append(row: VisitRow) throws {
        let id = Int(row.id)
        let kind = row.kind
        let checkIn = row.checkIn
        let lastSeen = row.lastSeen
        let checkOut = row.checkOut
        let samples = row.samples
        let rssiMax = row.rssiMax
        let rssiSum = row.rssiSum
        let clockUncorrected = row.clockUncorrected
        let sharedIdentity = row.sharedIdentity
        try row.withPayload { payload in
            append(
                id: id, kind: kind, payload: payload, checkIn: checkIn, lastSeen: lastSeen, checkOut: checkOut,
                samples: samples, rssiMax: rssiMax, rssiSum: rssiSum, clockUncorrected: clockUncorrected,
                sharedIdentity: sharedIdentity)
        }
    }

    mutating func finish() {
        if format == .json {
            buffer.append(contentsOf: (count == 0 ? "]," : "\n  ],").utf8)
            if nodeKey != nil { buffer.append(contentsOf: "\n  \"visit_count\": \(count),".utf8) }
            buffer.append(contentsOf: "\n  \"visits_clock_uncorrected\": \(clockUncorrected),".utf8)
            buffer.append(contentsOf: "\n  \"visits_shared_identifier\": \(sharedIdentifier)\n}\n".utf8)
        }
    }
}

extension TextWriter {
    /// A CSV field (RFC 4180): as it is, or quoted with inner quotes doubled when it holds a
    /// comma, a quote or a line break. Writes at most `2 × text.utf8.count + 2` bytes.
    fileprivate mutating func csvField(_ text: String) {
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
        guard text.utf8.contains(where: special) else {
            self.text(text)
            return
        }
        byte(UInt8(ascii: "\""))
        for value in text.utf8 {
            if value == UInt8(ascii: "\"") { byte(value) }
            byte(value)
        }
        byte(UInt8(ascii: "\""))
    }
}
