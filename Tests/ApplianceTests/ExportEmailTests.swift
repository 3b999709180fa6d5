import VenueDiary
import Foundation
import Testing
@testable import Appliance

/// Shared fixtures for the delivery tests.
enum Fixture {
    static let venue = VenueIdentity(country: 826, state: 4, code: 123123, name: "Erin's Stakehouse", area: "Leeds")

    /// A CSV written by the diary's exporter (CRLF rows, header): a closed visit, and an open
    /// one recorded before the clock was synchronised.
    static let csv = Data(
        DiaryExport.csv([
            Visit(
                id: 1, kind: .herald, payload: [0x30, 1, 2, 3, 4, 5], checkIn: 1_768_413_600, lastSeen: 1_768_419_000,
                checkOut: 1_768_419_000, samples: 812, rssiMax: -51, rssiSum: -51_562),
            Visit(
                id: 2, kind: .herald, payload: [0x30, 0xAA, 0xBB, 0xCC, 0xDD], checkIn: 1_768_420_800, lastSeen: 1_768_421_400,
                samples: 80, rssiMax: -70, rssiSum: -6_180, clockUncorrected: true),
        ]))

    static func document(visitsBeforeSync: Int = 0, venue: VenueIdentity = venue, csv: Data = csv) -> ExportDocument {
        ExportDocument(
            venue: venue, windowStart: Date(timeIntervalSince1970: 1_767_225_600),  // 2026-01-01T00:00Z
            windowEnd: Date(timeIntervalSince1970: 1_768_435_200),  // 2026-01-15T00:00Z
            visits: 2, visitsBeforeClockSync: visitsBeforeSync, content: csv,
            generated: Date(timeIntervalSince1970: 1_768_435_200))
    }
}

@Suite struct ExportEmailTests {
    func build(_ document: ExportDocument = Fixture.document(), to: [String] = ["tracers@example.org"]) -> ExportEmail {
        ExportEmail(
            document: document, from: "venue@example.org", to: to, date: Date(timeIntervalSince1970: 1_768_471_384),
            timeZone: TimeZone(identifier: "Europe/London")!, messageID: "<m1@example.org>", boundary: "=_venue-beacon_b1")
    }

    @Test func fileNameUsesCodeAndUTCDates() {
        #expect(Fixture.document().fileName == "venue-diary-123123-20260101-20260115.csv")
    }

    @Test func headersAndStructure() throws {
        let email = build()
        let text = String(decoding: email.bytes, as: UTF8.self)
        let message = ParsedMessage(text)
        #expect(message.header("From") == "\"Erin's Stakehouse\" <venue@example.org>")
        #expect(message.header("To") == "tracers@example.org")
        #expect(message.header("Subject") == "Venue diary Erin's Stakehouse (123123): 20260101 to 20260115")
        #expect(message.header("Date") == "Thu, 15 Jan 2026 10:03:04 +0000")
        #expect(message.header("Message-ID") == "<m1@example.org>")
        #expect(message.header("MIME-Version") == "1.0")
        #expect(message.header("Content-Type") == "multipart/mixed; boundary=\"=_venue-beacon_b1\"")

        let parts = message.parts
        try #require(parts.count == 2)
        #expect(parts[0].header("Content-Type") == "text/plain; charset=utf-8")
        let body = String(decoding: try #require(parts[0].decodedBody), as: UTF8.self)
        #expect(body.contains("Venue:     Erin's Stakehouse, Leeds"))
        #expect(body.contains("Window:    2026-01-01 00:00:00 UTC to 2026-01-15 00:00:00 UTC"))
        #expect(body.contains("Visits:    2"))
        #expect(body.contains("every visit in this window was recorded with a synchronised clock"))

        #expect(parts[1].header("Content-Type") == "text/csv; charset=utf-8; header=present; name=\"venue-diary-123123-20260101-20260115.csv\"")
        #expect(parts[1].header("Content-Disposition")?.hasPrefix("attachment;") == true)
        #expect(parts[1].parameter("Content-Disposition", "filename") == "venue-diary-123123-20260101-20260115.csv")
        #expect(parts[1].decodedBody == Fixture.csv)  // byte for byte, CRLFs included
    }

    @Test func linesAreShortSevenBitAndBase64Is76() {
        let big = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let text = String(decoding: build(Fixture.document(csv: big)).bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(text.utf8.allSatisfy { $0 < 0x80 && $0 != 0x0D })
        let base64 = lines.filter { $0.utf8.count == 76 && !$0.contains(" ") }
        #expect(base64.count == 5000 * 4 / 3 / 76)
        #expect(ParsedMessage(text).parts.last?.decodedBody == big)
    }

    @Test func unsyncedVisitsAreStated() throws {
        let text = String(decoding: build(Fixture.document(visitsBeforeSync: 3)).bytes, as: UTF8.self)
        let body = String(decoding: try #require(ParsedMessage(text).parts.first?.decodedBody), as: UTF8.self)
        #expect(body.contains("3 visits were recorded before the clock was synchronised and could not be corrected"))
        let one = String(decoding: build(Fixture.document(visitsBeforeSync: 1)).bytes, as: UTF8.self)
        let oneBody = String(decoding: ParsedMessage(one).parts.first?.decodedBody ?? Data(), as: UTF8.self)
        #expect(oneBody.contains("1 visit was recorded"))
    }

    @Test func synchronisedClockIsStated() {
        let body = ExportEmail.body(Fixture.document(visitsBeforeSync: 0))
        #expect(body.contains("Clock: every visit in this window was recorded with a synchronised clock."))
        #expect(body.contains("Visits:    2"))
    }

    @Test func nonASCIIVenueNamesAreEncodedWords() {
        var venue = Fixture.venue
        venue.name = "Café Zürich — Grüße aus der Küche, mit sehr langem Namen für die Kopfzeile"
        let text = String(decoding: build(Fixture.document(venue: venue), to: ["a@example.org", "b@example.org"]).bytes, as: UTF8.self)
        #expect(text.utf8.allSatisfy { $0 < 0x80 })
        let message = ParsedMessage(text)
        #expect(message.header("From") == venue.name + " <venue@example.org>")
        #expect(message.header("Subject")?.hasPrefix("Venue diary " + venue.name) == true)
        #expect(message.header("To") == "a@example.org, b@example.org")
        let body = String(decoding: message.parts.first?.decodedBody ?? Data(), as: UTF8.self)
        #expect(body.contains("Venue:     " + venue.name))
    }

    @Test func quotedPrintableKeepsTrailingSpaceAndEquals() {
        let text = "a = b \nline with trailing tab\t\n" + String(repeating: "é", count: 60)
        let encoded = MIMEText.quotedPrintable(text)
        #expect(encoded.split(separator: "\n").allSatisfy { $0.count <= 76 })
        #expect(encoded.hasPrefix("a =3D b=20\n"))
        #expect(String(decoding: ParsedMessage.decodeQuotedPrintable(encoded), as: UTF8.self) == text)
    }

    @Test func messageIDsAreUniqueAndUseTheSenderDomain() {
        let a = ExportEmail.newMessageID(for: Fixture.document(), from: "venue@example.org")
        let b = ExportEmail.newMessageID(for: Fixture.document(), from: "venue@example.org")
        #expect(a != b)
        #expect(a.hasPrefix("<venue-diary.123123."))
        #expect(a.hasSuffix("@example.org>"))
    }
}
