import Foundation
import Sightings
import Testing
import VenueDiary
@testable import Replication

@Suite struct HubExportTests {
    static let venue = VenueIdentity(country: 826, state: 4, code: 123_123, name: "The Venue")
    /// 2026-11-20T23:55:00Z.
    static let t0 = 1_795_218_900.0

    /// Phone 0xAA in the hall, then in room 2 (merged); phone 0xBB in the hall only.
    static func store(in directory: HubTestDirectory) throws -> HubStore {
        let store = try HubStore(path: directory.path("hub.sqlite"))
        try store.commit(
            node: "hall", diary: "d-hall", prev: 0,
            visits: [
                replicated(1, change: 1, payload: [0xAA], checkIn: t0, checkOut: t0 + 600, samples: 2, rssiMax: -50, rssiSum: -110),
                replicated(2, change: 2, payload: [0xBB], checkIn: t0 + 60, checkOut: t0 + 300, samples: 0, rssiMax: 0, rssiSum: 0),
            ], now: t0 + 3_600)
        try store.commit(
            node: "room-2", diary: "d-room-2", prev: 0,
            visits: [
                replicated(1, change: 1, payload: [0xAA], checkIn: t0 + 800, checkOut: t0 + 1_200, samples: 2, rssiMax: -70, rssiSum: -141)
            ], now: t0 + 3_600)
        return store
    }

    static func export(_ format: DiaryExport.Format, _ store: HubStore, window: VisitWindow = .all) throws -> (String, DiaryExport.Summary) {
        var bytes: [UInt8] = []
        let summary = try HubExport.export(
            format, from: store, window: window, venue: venue, checkOutSeconds: 300, generatedAt: t0 + 3_600, nodeKey: nil
        ) { bytes += $0 }
        return (String(decoding: bytes, as: UTF8.self), summary)
    }

    @Test func csvHasRooms() throws {
        let directory = try HubTestDirectory()
        let store = try Self.store(in: directory)
        let (csv, summary) = try Self.export(.csv, store)
        #expect(csv == DiaryExport.csvHeader + ",rooms\r\n"
            + "1,herald,aa,2026-11-20T23:55:00Z,2026-11-21T00:15:00Z,1200,4,-50,-62.8,0,0,hall;room-2\r\n"
            + "2,herald,bb,2026-11-20T23:56:00Z,2026-11-21T00:00:00Z,240,0,,,0,0,hall\r\n")
        #expect(summary.visits == 2)
        #expect(summary.earliestEnd == Self.t0 + 300)
    }

    @Test func jsonHasRoomsAndSegments() throws {
        let directory = try HubTestDirectory()
        let store = try Self.store(in: directory)
        let (json, _) = try Self.export(.json, store)
        #expect(json.contains(#""clock_uncorrected": false, "shared_identifier": false, "rooms": ["hall", "room-2"], "segments": [{"room": "hall", "check_in": "2026-11-20T23:55:00Z", "check_out": "2026-11-21T00:05:00Z", "samples": 2, "rssi_max": -50, "rssi_mean": -55.0}, {"room": "room-2", "check_in": "2026-11-21T00:08:20Z", "check_out": "2026-11-21T00:15:00Z", "samples": 2, "rssi_max": -70, "rssi_mean": -70.5}]}"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let visits = try #require(object["visits"] as? [[String: Any]])
        #expect(visits.count == 2)
        #expect(visits[0]["rooms"] as? [String] == ["hall", "room-2"])
        #expect(visits[1]["rooms"] as? [String] == ["hall"])
        let segments = try #require(visits[0]["segments"] as? [[String: Any]])
        #expect(segments.map { $0["room"] as? String } == ["hall", "room-2"])
        #expect(segments[1]["check_out"] as? String == "2026-11-21T00:15:00Z")
        let unmeasured = try #require((visits[1]["segments"] as? [[String: Any]])?.first)
        #expect(unmeasured["rssi_mean"] is NSNull)
    }

    @Test func aVisitOverlappingTheWindowOnlyAcrossAGapIsExportedWhole() throws {
        let directory = try HubTestDirectory()
        let store = try Self.store(in: directory)
        // Between the hall (to +600) and room 2 (from +800): no segment is in the window.
        let window = VisitWindow(from: Self.t0 + 650, to: Self.t0 + 700)
        #expect(try store.segments(in: window).isEmpty)
        let (csv, summary) = try Self.export(.csv, store, window: window)
        #expect(summary.visits == 1)
        #expect(csv.hasSuffix("\r\n1,herald,aa,2026-11-20T23:55:00Z,2026-11-21T00:15:00Z,1200,4,-50,-62.8,0,0,hall;room-2\r\n"))
        // A window on the hall part alone still gets the room-2 part.
        let visits = try HubExport.venueVisits(from: store, window: VisitWindow(from: nil, to: Self.t0 + 30), checkOutSeconds: 300)
        #expect(visits.map(\.rooms) == [["hall", "room-2"]])
    }
}
