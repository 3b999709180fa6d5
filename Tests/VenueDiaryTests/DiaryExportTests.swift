import Foundation
import Testing
@testable import VenueDiary

@Suite struct DiaryExportTests {
    static let visits = [
        // Spans midnight; fractional check-in shown rounded down; mean -61.666… → -61.7.
        Visit(
            id: 1, kind: .herald, payload: [0x00, 0xAB, 0x10, 0xFF], checkIn: 1_795_218_930.75, lastSeen: 1_795_219_805,
            checkOut: 1_795_219_805, samples: 3, rssiMax: -52, rssiSum: -185),
        // Still open: empty check-out, duration to the last sighting; mean exactly -70.5; its
        // identifier carried by two devices at once.
        Visit(
            id: 2, kind: .gaen, payload: Array(1...16), checkIn: 1_795_342_500, lastSeen: 1_795_342_740.9, checkOut: nil,
            samples: 2, rssiMax: -70, rssiSum: -141, sharedIdentity: true),
        // A leap day; a mean between -1 and 0 keeps its sign; recorded before clock sync, uncorrected.
        Visit(
            id: 3, kind: .advert, payload: [0xDE, 0xAD], checkIn: 951_825_600, lastSeen: 951_825_721, checkOut: 951_825_721,
            samples: 3, rssiMax: 0, rssiSum: -1, clockUncorrected: true),
    ]

    static let venue = VenueIdentity(
        country: 826, state: 4, code: 123_123, name: "Erin's \"Stake\"house", location: "1 High St\nLondon", area: nil,
        url: "https://example.org/erins")

    @Test func csvGolden() {
        let expected =
            "visit_id,kind,payload,check_in,check_out,duration_seconds,samples,rssi_max,rssi_mean,clock_uncorrected,shared_identifier\r\n"
            + "1,herald,00ab10ff,2026-11-20T23:55:30Z,2026-11-21T00:10:05Z,875,3,-52,-61.7,0,0\r\n"
            + "2,gaen,0102030405060708090a0b0c0d0e0f10,2026-11-22T10:15:00Z,,240,2,-70,-70.5,0,1\r\n"
            + "3,advert,dead,2000-02-29T12:00:00Z,2000-02-29T12:02:01Z,121,3,0,-0.3,1,0\r\n"
        #expect(String(decoding: DiaryExport.csv(Self.visits), as: UTF8.self) == expected)
        #expect(DiaryExport.csv([]) == Array((DiaryExport.csvHeader + "\r\n").utf8))
    }

    @Test func jsonGolden() throws {
        let window = VisitWindow(from: 1_794_096_000, to: 1_795_305_600)
        let json = DiaryExport.json(Self.visits, venue: Self.venue, window: window, generatedAt: 1_795_342_800.5)
        let expected = #"""
            {
              "venue": {"country": 826, "state": 4, "code": 123123, "name": "Erin's \"Stake\"house", "location": "1 High St\nLondon", "area": null, "url": "https://example.org/erins"},
              "window": {"from": "2026-11-08T00:00:00Z", "to": "2026-11-22T00:00:00Z"},
              "generated_at": "2026-11-22T10:20:00Z",
              "visits": [
                {"visit_id": 1, "kind": "herald", "payload": "00ab10ff", "check_in": "2026-11-20T23:55:30Z", "check_out": "2026-11-21T00:10:05Z", "duration_seconds": 875, "samples": 3, "rssi_max": -52, "rssi_mean": -61.7, "clock_uncorrected": false, "shared_identifier": false},
                {"visit_id": 2, "kind": "gaen", "payload": "0102030405060708090a0b0c0d0e0f10", "check_in": "2026-11-22T10:15:00Z", "check_out": null, "duration_seconds": 240, "samples": 2, "rssi_max": -70, "rssi_mean": -70.5, "clock_uncorrected": false, "shared_identifier": true},
                {"visit_id": 3, "kind": "advert", "payload": "dead", "check_in": "2000-02-29T12:00:00Z", "check_out": "2000-02-29T12:02:01Z", "duration_seconds": 121, "samples": 3, "rssi_max": 0, "rssi_mean": -0.3, "clock_uncorrected": true, "shared_identifier": false}
              ],
              "visits_clock_uncorrected": 1,
              "visits_shared_identifier": 1
            }

            """#
        #expect(String(decoding: json, as: UTF8.self) == expected)

        // It is JSON that a standard parser reads back.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let venue = try #require(object["venue"] as? [String: Any])
        #expect(venue["name"] as? String == Self.venue.name)
        #expect(venue["location"] as? String == "1 High St\nLondon")
        #expect((object["visits"] as? [Any])?.count == 3)
        #expect(object["visits_clock_uncorrected"] as? Int == 1)
        #expect(object["visits_shared_identifier"] as? Int == 1)
    }

    @Test func visitsWithoutRSSIMeasurementsHaveNoRSSIStatistics() throws {
        // Seen only without RSSI (the btvirt emulator, a phone that only wrote to the node).
        let unmeasured = [Visit(id: 4, kind: .herald, payload: [1], checkIn: 1_795_342_500, lastSeen: 1_795_342_800, checkOut: 1_795_342_800, samples: 0, rssiMax: 0, rssiSum: 0)]
        #expect(String(decoding: DiaryExport.csv(unmeasured), as: UTF8.self).hasSuffix(
            "\r\n4,herald,01,2026-11-22T10:15:00Z,2026-11-22T10:20:00Z,300,0,,,0,0\r\n"))
        let json = DiaryExport.json(unmeasured, venue: Self.venue, window: .all, generatedAt: 0)
        #expect(String(decoding: json, as: UTF8.self).contains("\"samples\": 0, \"rssi_max\": null, \"rssi_mean\": null, \"clock_uncorrected\": false, \"shared_identifier\": false}"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let visit = try #require((object["visits"] as? [[String: Any]])?.first)
        #expect(visit["rssi_max"] is NSNull)
    }

    @Test func jsonOfNothingForEveryVisit() throws {
        let json = DiaryExport.json([], venue: Self.venue, window: .all, generatedAt: 0)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.hasSuffix("  \"window\": {\"from\": null, \"to\": null},\n  \"generated_at\": \"1970-01-01T00:00:00Z\",\n  \"visits\": [],\n  \"visits_clock_uncorrected\": 0,\n  \"visits_shared_identifier\": 0\n}\n"))
        #expect(try JSONSerialization.jsonObject(with: Data(json)) is [String: Any])
    }

    @Test func timesAreShownInWholeUTCSecondsWithinFourDigitYears() {
        #expect(UTCTime.iso8601(1_795_342_500.9) == "2026-11-22T10:15:00Z")
        #expect(UTCTime.iso8601(951_825_600) == "2000-02-29T12:00:00Z")
        #expect(UTCTime.iso8601(-5) == "1970-01-01T00:00:00Z")
        #expect(UTCTime.iso8601(1e300) == "9999-12-31T23:59:59Z")
        #expect(UTCTime.iso8601(.nan) == "1970-01-01T00:00:00Z")
    }

    @Test func shareWindows() throws {
        let now = 1_795_305_600.0
        #expect(try DiaryExport.window(.days(14), now: now) == VisitWindow(from: now - 14 * 86_400, to: now))
        #expect(try DiaryExport.window(.all, now: now) == .all)
        #expect(throws: DiaryError.sharingDisabled) { try DiaryExport.window(.days(0), now: now) }
        #expect(throws: DiaryError.self) { try DiaryExport.window(.days(-3), now: now) }
        #expect("\(DiaryError.sharingDisabled)".contains("share_days = 0"))
    }

    @Test func anExportStreamsTheVisitsOverlappingTheShareWindow() throws {
        let dir = try TemporaryDirectory()
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let now = 1_795_342_800.0  // 2026-11-22T10:20:00Z
        var stored: [Visit] = []
        for day in 0..<20 {
            let checkIn = now - Double(day) * 86_400 - 7200
            stored.append(Visit(kind: .herald, payload: heraldPayload(UInt32(day)), checkIn: checkIn, lastSeen: checkIn + 900, checkOut: checkIn + 900, samples: 10, rssiMax: -50, rssiSum: -600))
        }
        try store.save(stored)
        let window = try DiaryExport.window(.days(14), now: now)
        var chunks: [[UInt8]] = []
        let count = try DiaryExport.export(.csv, from: store, window: window, venue: Self.venue, generatedAt: now) { chunks.append($0) }
        #expect(count.visits == 14 && count.clockUncorrected == 0)
        let expected = DiaryExport.csv(try store.visits(in: window))
        #expect(chunks.flatMap { $0 } == expected)
        #expect(String(decoding: expected, as: UTF8.self).split(separator: "\r\n").count == 15)

        let all = try DiaryExport.export(.json, from: store, window: .all, venue: Self.venue, generatedAt: now) { _ in }
        #expect(all.visits == 20)
    }

    @Test func aLargeExportArrivesInChunksAndToAFile() throws {
        let dir = try TemporaryDirectory()
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let visits = (0..<600).map { i in
            Visit(kind: .herald, payload: heraldPayload(UInt32(i)), checkIn: Double(i) * 60, lastSeen: Double(i) * 60 + 300, checkOut: Double(i) * 60 + 300, samples: 30, rssiMax: -40, rssiSum: -1800)
        }
        try store.save(visits)
        for format in DiaryExport.Format.allCases {
            var chunks: [[UInt8]] = []
            try DiaryExport.export(format, from: store, window: .all, venue: Self.venue, generatedAt: 0) { chunks.append($0) }
            #expect(chunks.count >= 3)
            let whole = chunks.flatMap { $0 }
            let expected = format == .csv
                ? DiaryExport.csv(try store.visits())
                : DiaryExport.json(try store.visits(), venue: Self.venue, window: .all, generatedAt: 0)
            #expect(whole == expected)

            let path = dir.path("export.\(format.rawValue)")
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            #expect(try DiaryExport.export(format, from: store, window: .all, venue: Self.venue, generatedAt: 0, to: { try handle.write(contentsOf: $0) }).visits == 600)
            try handle.close()
            #expect(fileBytes(path) == Data(expected))
        }
    }
}
