import CivilDate
import Sightings

/// A sightings file row that could not be read, with its 1-based line number.
public struct SightingsCSVError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var problem: String

    public init(line: Int, problem: String) {
        self.line = line
        self.problem = problem
    }

    public var description: String { "line \(line): \(problem)" }
}

/// Parser of sightings files, the input of `venue-beacon diary replay`:
///
/// ```
/// time,kind,payload,rssi
/// 1795550400.25,herald,0012345678…,-67
/// 2026-11-20T18:00:05+01:00,gaen,8c1f…,-80
/// 1795550460,herald,0012345678…,
/// ```
///
/// `time` is Unix seconds with an optional fraction, or ISO-8601 with `Z` or a UTC offset;
/// `kind` is one of herald, gaen, opentrace, advert; `payload` is hex (1–1024 bytes; a `gaen`
/// payload of 20 bytes is the 16-byte RPI followed by its 4-byte metadata); `rssi` is
/// an integer dBm from -127 to 127, or empty for a sighting without a measurement (presence
/// all the same, left out of the RSSI statistics, as the live node records it). Fields may be quoted and padded with spaces; lines end in LF
/// or CRLF; blank lines are skipped. Pure: bytes in, sightings or the first bad line out.
public enum SightingsCSV {
    public static let header = "time,kind,payload,rssi"
    static let maxPayloadBytes = 1024
    /// Times from 1970 up to the end of year 9999.
    static let latestTime = 253_402_300_800.0
    /// How far past "now" a sighting may be stamped: the clock of the machine that recorded it
    /// may run a little ahead of this one's. Later is refused: such a visit would never be purged.
    public static let futureToleranceSeconds = 600.0

    /// Parses a whole file; `now`: sightings later than now + ``futureToleranceSeconds`` are refused.
    public static func parse(_ bytes: [UInt8], now: Double = .infinity) throws(SightingsCSVError) -> [Sighting] {
        var reader = LineReader(now: now)
        var sightings: [Sighting] = []
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if let sighting = try reader.read(line, number: lineNumber) { sightings.append(sighting) }
        }
        try reader.finish()
        return sightings
    }

    /// Reads a sightings file one line at a time (a file too large to hold goes through this):
    /// the header first, then one sighting per non-blank line.
    public struct LineReader {
        private var sawHeader = false
        private let now: Double

        /// `now`: sightings later than now + ``futureToleranceSeconds`` are refused (infinity: no limit).
        public init(now: Double = .infinity) { self.now = now }

        /// One line without its `\n` (a trailing `\r` is dropped here); nil for the header and
        /// blank lines.
        public mutating func read(_ rawLine: ArraySlice<UInt8>, number lineNumber: Int) throws(SightingsCSVError) -> Sighting? {
            var line = rawLine
            if lineNumber == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if trimmed(line).isEmpty { return nil }
            let fields = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map(unquoted)
            if !sawHeader {
                let found = String(decoding: line.prefix(200), as: UTF8.self)
                guard fields.map({ String(decoding: $0, as: UTF8.self).lowercased() }) == ["time", "kind", "payload", "rssi"] else {
                    throw SightingsCSVError(line: lineNumber, problem: "expected the header \(header), found '\(found)'")
                }
                sawHeader = true
                return nil
            }
            do throws(RowError) {
                let sighting = try sighting(fields)
                if sighting.time > now + futureToleranceSeconds {
                    throw RowError(
                        problem: "time '\(text(trimmed(fields[0])))' (\(TimeText.iso8601(sighting.time))) is later than now (\(TimeText.iso8601(now))) "
                            + "by more than the \(Int(futureToleranceSeconds / 60)) minutes tolerated for a clock running ahead: a sighting cannot come from the future")
                }
                return sighting
            } catch {
                throw SightingsCSVError(line: lineNumber, problem: error.problem)
            }
        }

        /// At the end of the file: a file without a header is refused.
        public func finish() throws(SightingsCSVError) {
            guard sawHeader else {
                throw SightingsCSVError(line: 1, problem: "no header: a sightings file starts with \(header)")
            }
        }
    }

    private struct RowError: Error {
        var problem: String
    }

    private static func sighting(_ fields: [ArraySlice<UInt8>]) throws(RowError) -> Sighting {
        guard fields.count == 4 else {
            throw RowError(problem: "expected 4 fields (\(header)), found \(fields.count)")
        }
        let (timeField, kindField, payloadField, rssiField) = (fields[0], fields[1], fields[2], fields[3])
        guard let time = time(timeField) else {
            throw RowError(problem: "time '\(text(timeField))' is neither Unix seconds nor ISO-8601 between 1970 and 9999 (e.g. 1795550400.5 or 2026-11-20T18:00:00Z)")
        }
        guard let kind = PayloadKind(rawValue: text(kindField).lowercased()) else {
            let allowed = PayloadKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw RowError(problem: "kind '\(text(kindField))' is not one of \(allowed)")
        }
        let payload = try payload(payloadField)
        // Empty: not measured.
        var rssi: Int?
        if !rssiField.isEmpty {
            guard let value = integer(rssiField), (-127...127).contains(value) else {
                throw RowError(problem: "rssi '\(text(rssiField))' is not a whole number of dBm from -127 to 127")
            }
            rssi = value
        }
        // A GAEN payload of 20 bytes is the rolling proximity identifier (the visit's identity)
        // followed by the 4 bytes of Associated Encrypted Metadata heard with it.
        if kind == .gaen, payload.count != 16, payload.count != 20 {
            throw RowError(problem: "a gaen payload is 16 bytes (the rolling proximity identifier) or 20 (with its 4 bytes of metadata), not \(payload.count)")
        }
        if kind == .gaen, payload.count == 20 {
            return Sighting(time: time, kind: kind, payload: Array(payload.prefix(16)), rssi: rssi, metadata: Array(payload.suffix(4)))
        }
        return Sighting(time: time, kind: kind, payload: payload, rssi: rssi)
    }

    private static func payload(_ field: ArraySlice<UInt8>) throws(RowError) -> [UInt8] {
        guard !field.isEmpty else { throw RowError(problem: "payload is empty") }
        guard field.count % 2 == 0 else {
            throw RowError(problem: "payload has an odd number of hex digits (\(field.count))")
        }
        guard field.count / 2 <= maxPayloadBytes else {
            throw RowError(problem: "payload is \(field.count / 2) bytes; at most \(maxPayloadBytes) are allowed")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.count / 2)
        var high: UInt8?
        for c in field {
            guard let nibble = hexValue(c) else {
                throw RowError(problem: "payload has a character that is not a hex digit: '\(text([c][...]))'")
            }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    // MARK: Fields

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func text(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field, as: UTF8.self)
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") }

    private static func trimmed(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var field = field
        while let c = field.first, isSpace(c) { field = field.dropFirst() }
        while let c = field.last, isSpace(c) { field = field.dropLast() }
        return field
    }

    private static func unquoted(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let field = trimmed(field)
        let quote = UInt8(ascii: "\"")
        if field.count >= 2, field.first == quote, field.last == quote {
            return trimmed(field.dropFirst().dropLast())
        }
        return field
    }

    private static func isDigit(_ c: UInt8) -> Bool { (48...57).contains(c) }

    /// An optionally signed decimal integer of at most 9 digits.
    static func integer(_ field: ArraySlice<UInt8>) -> Int? {
        var digits = field
        var sign = 1
        if let c = digits.first, c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
            if c == UInt8(ascii: "-") { sign = -1 }
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy(isDigit) else { return nil }
        return sign * digits.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    /// Unix seconds (`1795550400`, `1795550400.25`) or ISO-8601; nil outside 1970…9999.
    static func time(_ field: ArraySlice<UInt8>) -> Double? {
        let value = field.allSatisfy { isDigit($0) || $0 == UInt8(ascii: ".") } ? unixSeconds(field) : iso8601(field)
        guard let value, value >= 0, value < latestTime else { return nil }
        return value
    }

    private static func unixSeconds(_ field: ArraySlice<UInt8>) -> Double? {
        let parts = field.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 15 else { return nil }
        if parts.count == 2 && parts[1].isEmpty { return nil }
        return Double(text(field))
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`; `t` or a space may replace `T`.
    private static func iso8601(_ field: ArraySlice<UInt8>) -> Double? {
        let c = Array(field)
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= c.count, c[start..<start + count].allSatisfy(isDigit) else { return nil }
            return c[start..<start + count].reduce(0) { $0 * 10 + Int($1 - 48) }
        }
        func at(_ i: Int, _ ascii: Unicode.Scalar) -> Bool { i < c.count && c[i] == UInt8(ascii: ascii) }
        guard let year = number(0, 4), at(4, "-"), let month = number(5, 2), at(7, "-"), let day = number(8, 2),
            c.count > 10, [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(c[10]),
            let hour = number(11, 2), at(13, ":"), let minute = number(14, 2), at(16, ":"), let second = number(17, 2),
            case let date = CivilDate(year: year, month: month, day: day), date.isValid, hour < 24, minute < 60, second < 60
        else { return nil }

        var i = 19
        var fraction = 0.0
        if at(i, ".") {
            var scale = 0.1
            i += 1
            let start = i
            while i < c.count, isDigit(c[i]) {
                fraction += Double(c[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if at(i, "Z") || at(i, "z") {
            i += 1
        } else if at(i, "+") || at(i, "-") {
            let sign = at(i, "-") ? -1 : 1
            guard let hours = number(i + 1, 2), hours < 24 else { return nil }
            i += 3
            if at(i, ":") { i += 1 }
            guard let minutes = number(i, 2), minutes < 60 else { return nil }
            i += 2
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard i == c.count else { return nil }
        return Double(CivilTime(date: date, hour: hour, minute: minute, second: second).unixSeconds - offset) + fraction
    }
}
