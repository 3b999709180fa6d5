import Sightings
import Testing
import VenueDiary
@testable import Replication

/// A stored node visit: `room`'s visit of identity (`kind`, `payload`).
func segment(
    _ id: Int64, _ room: String, payload: [UInt8] = [0x01], kind: PayloadKind = .herald, checkIn: Double,
    checkOut: Double?, lastSeen: Double? = nil, samples: Int = 2, rssiMax: Int = -60, rssiSum: Int = -130,
    clockUncorrected: Bool = false, metadata: [UInt8]? = nil
) -> HubSegment {
    HubSegment(
        id: id, node: room, diary: "diary-\(room)", nodeVisitID: id * 10, version: 1,
        visit: Visit(
            kind: kind, payload: payload, checkIn: checkIn, lastSeen: lastSeen ?? checkOut ?? checkIn, checkOut: checkOut,
            samples: samples, rssiMax: rssiMax, rssiSum: rssiSum, clockUncorrected: clockUncorrected, metadata: metadata))
}

@Suite struct VenueMergeTests {
    @Test func overlappingRoomsMakeOneVisit() throws {
        let merged = VenueMerge.merge(
            [
                segment(8, "room-2", checkIn: 1_500, checkOut: 2_000, samples: 4, rssiMax: -70, rssiSum: -290),
                segment(5, "hall", checkIn: 1_000, checkOut: 1_600, samples: 2, rssiMax: -55, rssiSum: -115),
            ], checkOutSeconds: 300)
        #expect(merged.count == 1)
        let visit = try #require(merged.first)
        #expect(visit.visit.id == 5)
        #expect(visit.visit.checkIn == 1_000)
        #expect(visit.visit.checkOut == 2_000)
        #expect(visit.visit.lastSeen == 2_000)
        #expect(visit.visit.samples == 6)
        #expect(visit.visit.rssiMax == -55)
        #expect(visit.visit.rssiSum == -405)
        #expect(visit.rooms == ["hall", "room-2"])
        #expect(visit.segments == [
            RoomSegment(room: "hall", checkIn: 1_000, checkOut: 1_600, lastSeen: 1_600, samples: 2, rssiMax: -55, rssiSum: -115),
            RoomSegment(room: "room-2", checkIn: 1_500, checkOut: 2_000, lastSeen: 2_000, samples: 4, rssiMax: -70, rssiSum: -290),
        ])
    }

    @Test func aGapOfExactlyCheckOutSecondsMergesOneMoreDoesNot() {
        let hall = segment(1, "hall", checkIn: 1_000, checkOut: 1_600)
        let atLimit = VenueMerge.merge([hall, segment(2, "room-2", checkIn: 1_900, checkOut: 2_200)], checkOutSeconds: 300)
        #expect(atLimit.count == 1)
        #expect(atLimit.first?.visit.checkOut == 2_200)
        let past = VenueMerge.merge([hall, segment(2, "room-2", checkIn: 1_901, checkOut: 2_200)], checkOutSeconds: 300)
        #expect(past.map(\.visit.id) == [1, 2])
        #expect(past.map(\.rooms) == [["hall"], ["room-2"]])
        #expect(past.map(\.visit.checkOut) == [1_600, 2_200])
        // An open segment ends, for the gap, at its last sighting.
        let open = segment(1, "hall", checkIn: 1_000, checkOut: nil, lastSeen: 1_600)
        #expect(VenueMerge.merge([open, segment(2, "room-2", checkIn: 1_900, checkOut: 2_200)], checkOutSeconds: 300).count == 1)
        #expect(VenueMerge.merge([open, segment(2, "room-2", checkIn: 1_901, checkOut: 2_200)], checkOutSeconds: 300).count == 2)
    }

    @Test func threeRoomsInTheOrderTheyWereVisited() throws {
        let segments = [
            segment(4, "hall", checkIn: 1_650, checkOut: 1_800),  // back to the hall
            segment(3, "room-3", checkIn: 1_450, checkOut: 1_600),
            segment(1, "hall", checkIn: 1_000, checkOut: 1_200),
            segment(2, "room-2", checkIn: 1_250, checkOut: 1_400),
        ]
        let merged = VenueMerge.merge(segments, checkOutSeconds: 300)
        let visit = try #require(merged.first)
        #expect(merged.count == 1)
        #expect(visit.rooms == ["hall", "room-2", "room-3"])
        #expect(visit.segments.map(\.room) == ["hall", "room-2", "room-3", "hall"])
        #expect(visit.segments.map(\.checkIn) == [1_000, 1_250, 1_450, 1_650])
        #expect(visit.visit.checkIn == 1_000)
        #expect(visit.visit.checkOut == 1_800)
    }

    @Test func aShortSegmentInASecondRoomJoinsTheVisit() throws {
        // Seen in the hall for an hour; a node in room 2 catches the phone through the wall.
        let merged = VenueMerge.merge(
            [
                segment(1, "hall", checkIn: 1_000, checkOut: 4_600, samples: 100, rssiMax: -50, rssiSum: -6_000),
                segment(2, "room-2", checkIn: 2_000, checkOut: 2_130, samples: 2, rssiMax: -88, rssiSum: -178),
            ], checkOutSeconds: 300)
        let visit = try #require(merged.first)
        #expect(merged.count == 1)
        #expect(visit.visit.checkIn == 1_000)
        #expect(visit.visit.checkOut == 4_600)
        #expect(visit.visit.lastSeen == 4_600)
        #expect(visit.rooms == ["hall", "room-2"])
        #expect(visit.segments.count == 2)
        #expect(visit.visit.rssiMax == -50)
    }

    @Test func differentIdentitiesAreNeverMerged() {
        let merged = VenueMerge.merge(
            [
                segment(1, "hall", payload: [0x01], checkIn: 1_000, checkOut: 2_000),
                segment(2, "hall", payload: [0x02], checkIn: 1_000, checkOut: 2_000),
                segment(3, "room-2", payload: [0x01], kind: .gaen, checkIn: 1_100, checkOut: 1_900),
                segment(4, "room-2", payload: [0x01, 0x00], checkIn: 1_100, checkOut: 1_900),
            ], checkOutSeconds: 300)
        #expect(merged.map(\.visit.id) == [1, 2, 3, 4])
        #expect(merged.map(\.visit.payload) == [[0x01], [0x02], [0x01], [0x01, 0x00]])
        #expect(merged.map(\.visit.kind) == [.herald, .herald, .gaen, .herald])
        #expect(merged.allSatisfy { $0.segments.count == 1 })
    }

    @Test func anOpenSegmentThatEndsLastLeavesTheVisitOpen() throws {
        let open = VenueMerge.merge(
            [
                segment(1, "hall", checkIn: 1_000, checkOut: 1_600),
                segment(2, "room-2", checkIn: 1_500, checkOut: nil, lastSeen: 1_700),
            ], checkOutSeconds: 300)
        let visit = try #require(open.first)
        #expect(open.count == 1)
        #expect(visit.visit.checkOut == nil)
        #expect(visit.visit.lastSeen == 1_700)
        #expect(visit.segments.map(\.checkOut) == [1_600, nil])
        // An open segment that ends before a closed one: the visit is closed.
        let closed = VenueMerge.merge(
            [
                segment(1, "hall", checkIn: 1_000, checkOut: nil, lastSeen: 1_200),
                segment(2, "room-2", checkIn: 1_100, checkOut: 1_900),
            ], checkOutSeconds: 300)
        #expect(closed.count == 1)
        #expect(closed.first?.visit.checkOut == 1_900)
    }

    @Test func theRSSIMeanIsWeightedBySamples() throws {
        let merged = VenueMerge.merge(
            [
                segment(1, "hall", checkIn: 1_000, checkOut: 1_100, samples: 1, rssiMax: -40, rssiSum: -40),
                segment(2, "room-2", checkIn: 1_050, checkOut: 1_200, samples: 3, rssiMax: -70, rssiSum: -240),
                // No measurements: its RSSI fields say nothing.
                segment(3, "room-3", checkIn: 1_150, checkOut: 1_250, samples: 0, rssiMax: 0, rssiSum: 0),
            ], checkOutSeconds: 300)
        let visit = try #require(merged.first)
        #expect(merged.count == 1)
        #expect(visit.visit.samples == 4)
        #expect(visit.visit.rssiMean == -70)  // not the mean of the means, -60
        #expect(visit.visit.rssiMax == -40)
        let unmeasured = VenueMerge.merge(
            [
                segment(1, "hall", checkIn: 1_000, checkOut: 1_100, samples: 0, rssiMax: 0, rssiSum: 0),
                segment(2, "room-2", checkIn: 1_050, checkOut: 1_200, samples: 2, rssiMax: -80, rssiSum: -170),
            ], checkOutSeconds: 300)
        #expect(unmeasured.first?.visit.rssiMax == -80)
    }

    @Test func clockFlagMetadataAndOrder() throws {
        let merged = VenueMerge.merge(
            [
                segment(9, "room-2", payload: [2], checkIn: 500, checkOut: 600),
                segment(4, "hall", checkIn: 1_000, checkOut: 1_100),
                segment(3, "room-2", checkIn: 1_050, checkOut: 1_200, clockUncorrected: true, metadata: [1, 2, 3, 4]),
                segment(7, "room-3", checkIn: 1_150, checkOut: 1_250, metadata: [9, 9, 9, 9]),
                segment(6, "hall", payload: [3], checkIn: 1_000, checkOut: 1_100),
            ], checkOutSeconds: 300)
        #expect(merged.map(\.visit.id) == [9, 4, 6])
        let visit = merged[1]
        #expect(visit.visit.clockUncorrected)
        #expect(visit.visit.metadata == [1, 2, 3, 4])
        #expect(!merged[0].visit.clockUncorrected)
        #expect(merged[0].visit.metadata == nil)
    }
}
