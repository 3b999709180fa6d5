import BLEHost
import Foundation

/// The email that carries an export to the contact tracers: a `multipart/mixed` MIME message
/// with a short text body (venue, window, number of visits, clock state) and the CSV attached.
///
/// Pure: every varying input (date, Message-ID, boundary) is a parameter, so the same export
/// gives the same bytes. Lines end in LF, as the sendmail interface expects (msmtp, Postfix and
/// Exim turn them into CRLF on the wire); the CSV's own CRLFs survive inside base64.
public struct ExportEmail: Sendable, Equatable {
    public var messageID: String
    /// The whole message, ready for `sendmail -t -i`.
    public var bytes: Data

    /// A Message-ID that is unique for this export: `<venue-diary.CODE.STAMP.RANDOM@DOMAIN>`.
    public static func newMessageID(for document: ExportDocument, from: String) -> String {
        var random = SystemRandomNumberGenerator()
        let nonce = Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &random) })
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let stamp = Int(document.generated.timeIntervalSince1970)
        return "<venue-diary.\(document.venue.code).\(stamp).\(nonce)@\(domain)>"
    }

    public init(
        document: ExportDocument, from: String, to recipients: [String], date: Date, timeZone: TimeZone = .current,
        messageID: String, boundary: String
    ) {
        self.messageID = messageID
        let venue = document.venue
        let subject = "Venue diary \(venue.name) (\(venue.code)): \(UTCDate.compact(document.windowStart)) to \(UTCDate.compact(document.windowEnd))"
        var lines: [String] = []
        lines.append("From: " + MIMEText.phrase(venue.name) + " <\(from)>")
        lines.append("To: " + recipients.joined(separator: ",\n "))
        lines.append("Subject: " + MIMEText.unstructured(subject))
        lines.append("Date: " + RFC5322Date.format(date, timeZone: timeZone))
        lines.append("Message-ID: " + messageID)
        lines.append("MIME-Version: 1.0")
        lines.append("Auto-Submitted: auto-generated")
        lines.append("Content-Type: multipart/mixed; boundary=\"\(boundary)\"")
        lines.append("")
        lines.append(
            document.sealed
                ? "A MIME message: a covering note and the venue diary as a CSV file encrypted with age."
                : "A MIME message: a covering note and the venue diary as a CSV file.")
        lines.append("")
        lines.append("--" + boundary)
        lines.append("Content-Type: text/plain; charset=utf-8")
        lines.append("Content-Transfer-Encoding: quoted-printable")
        lines.append("")
        lines.append(MIMEText.quotedPrintable(Self.body(document)))
        lines.append("--" + boundary)
        lines.append(
            document.sealed
                ? "Content-Type: application/octet-stream;\n name=\"\(document.fileName)\""
                : "Content-Type: text/csv; charset=utf-8; header=present;\n name=\"\(document.fileName)\"")
        lines.append("Content-Disposition: attachment;\n filename=\"\(document.fileName)\"")
        lines.append("Content-Transfer-Encoding: base64")
        lines.append("")
        lines.append(contentsOf: MIMEText.base64Lines(document.content))
        if let signature = document.signature {
            lines.append("--" + boundary)
            lines.append("Content-Type: application/octet-stream;\n name=\"\(document.signatureFileName)\"")
            lines.append("Content-Disposition: attachment;\n filename=\"\(document.signatureFileName)\"")
            lines.append("Content-Transfer-Encoding: base64")
            lines.append("")
            lines.append(contentsOf: MIMEText.base64Lines(Data(signature.utf8)))
        }
        lines.append("--" + boundary + "--")
        lines.append("")
        bytes = Data(lines.joined(separator: "\n").utf8)
    }

    /// The size of the export's attachments as they go on the wire: base64 in lines of 76
    /// characters, each ended by CRLF (headers and the note add a few KB more).
    static func attachmentBytes(_ document: ExportDocument) -> Int {
        func onTheWire(_ count: Int) -> Int {
            let base64 = (count + 2) / 3 * 4
            return base64 + (base64 + 75) / 76 * 2
        }
        return onTheWire(document.content.count) + onTheWire(document.signature?.utf8.count ?? 0)
    }

    /// The covering note a contact tracer reads.
    static func body(_ document: ExportDocument) -> String {
        let venue = document.venue
        var text = """
            Venue diary export from venue-beacon \(ProductVersion.string).

            Venue:     \(venue.name)\(venue.area.map { ", " + $0 } ?? "")\(venue.location.map { " (" + $0 + ")" } ?? "")
            Code:      country \(venue.country), state \(venue.state), venue \(venue.code)
            Window:    \(UTCDate.readable(document.windowStart)) to \(UTCDate.readable(document.windowEnd))
            Visits:    \(document.visits)
            Generated: \(UTCDate.readable(document.generated))
            Node key:  \(document.nodeKey ?? "none (unsigned)")

            """
        if document.visitsBeforeClockSync == 0 {
            text += "Clock: every visit in this window was recorded with a synchronised clock.\n"
        } else {
            let n = document.visitsBeforeClockSync
            text += """
                Clock: \(n) visit\(n == 1 ? " was" : "s were") recorded before the clock was synchronised and \
                could not be corrected; \(n == 1 ? "its" : "their") times may be wrong by hours.

                """
        }
        if document.sealed {
            text += """

                The attachment \(document.fileName) is encrypted to the contact-tracing team's age key(s):
                    age -d -i tracers.key -o diary.csv \(document.fileName)

                """
        }
        if document.signature != nil {
            text += """

                \(document.signatureFileName) is the node's signature of the attachment as sent. Check it
                with the node's public key (venue-beacon identity on the node) before decrypting:
                    minisign -Vm \(document.fileName) -P <the node's public key>
                The node key's fingerprint above must match the one the venue registered.

                """
        }
        text += """

            The \(document.sealed ? "decrypted file" : "attachment \(document.fileName)") has one row per visit: a phone (identified by its
            Herald payload) present at the venue for longer than the check-in time. Times are UTC.
            Columns: visit_id, kind, payload, check_in, check_out, duration_seconds, samples,
            rssi_max, rssi_mean, clock_uncorrected, shared_identifier. An empty check_out means the
            visit was still open; clock_uncorrected is 1 for a visit whose times could not be
            corrected; shared_identifier is 1 for a visit whose identifier two or more phones
            carried at once (it may be several people).

            """
        return text
    }
}

/// RFC 5322 `Date:` values (`Sun, 22 Nov 2026 02:27:44 +0000`), English names, no locale.
enum RFC5322Date {
    static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let offset = timeZone.secondsFromGMT(for: date) / 60
        let sign = offset < 0 ? "-" : "+"
        let zone = sign + UTCDate.pad(abs(offset) / 60) + UTCDate.pad(abs(offset) % 60)
        let p = UTCDate.pad
        return "\(days[(c.weekday ?? 1) - 1]), \(c.day ?? 1) \(months[(c.month ?? 1) - 1]) \(p(c.year ?? 0, 4)) "
            + "\(p(c.hour ?? 0, 2)):\(p(c.minute ?? 0, 2)):\(p(c.second ?? 0, 2)) \(zone)"
    }
}

/// Header and body encodings: everything the message contains ends up as 7-bit ASCII lines of
/// at most 78 characters.
enum MIMEText {
    /// A display name: a quoted string when plain ASCII, else RFC 2047 encoded words.
    static func phrase(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) && text.count <= 60 {
            return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return encodedWords(text)
    }

    /// An unstructured header value (Subject): as is when short plain ASCII, else encoded words.
    static func unstructured(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) && text.count <= 60 && !text.contains("=?") {
            return text
        }
        return encodedWords(text)
    }

    /// RFC 2047 `=?utf-8?B?…?=` words of at most 75 characters, never splitting a character,
    /// joined by folding whitespace.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk = Data()
        for character in text {
            let bytes = Data(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?utf-8?B?" + chunk.base64EncodedString() + "?=")
                chunk = Data()
            }
            chunk.append(bytes)
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?utf-8?B?" + chunk.base64EncodedString() + "?=") }
        return words.joined(separator: "\n ")
    }

    /// Base64 in lines of 76 characters (RFC 2045).
    static func base64Lines(_ data: Data) -> [String] {
        let all = Array(data.base64EncodedString().utf8)
        return stride(from: 0, to: all.count, by: 76).map { String(decoding: all[$0..<min($0 + 76, all.count)], as: UTF8.self) }
    }

    /// Quoted-printable (RFC 2045 §6.7) of UTF-8 text with LF line ends; lines stay ≤ 76 characters.
    static func quotedPrintable(_ text: String) -> String {
        var out: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var encoded = ""
            var width = 0
            for (index, byte) in bytes.enumerated() {
                let last = index == bytes.count - 1
                let literal = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !last)
                let piece = literal ? String(UnicodeScalar(byte)) : "=" + Hex.encode([byte]).uppercased()
                if width + piece.count > 75 {
                    encoded += "=\n"
                    width = 0
                }
                encoded += piece
                width += piece.count
            }
            out.append(encoded)
        }
        return out.joined(separator: "\n")
    }
}
