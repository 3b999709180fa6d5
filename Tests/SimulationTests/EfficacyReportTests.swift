import Foundation
import Sightings
import Testing
import VenueDiary

@testable import Simulation

@Suite struct EfficacyReportTests {
    static let origin = 1_000_000.0

    static func phone(_ id: Int, kind: DeviceKind = .heraldAndroid, _ spans: [(Double, Double)]) -> SimulatedDevice {
        SimulatedDevice(
            id: id, kind: kind, owner: id, payload: kind == .gaenPhone ? nil : [UInt8(id), 0xAA],
            advert: .heraldService, advertInterval: 0.25, signalWriteInterval: nil,
            rotation: kind == .gaenPhone ? AddressRotation(period: 900, phase: 0, seed: 9) : .fixed(seed: UInt64(id)),
            measuredPower: -60, presence: spans.map { PresenceSegment(start: $0.0, end: $0.1, path: .fixed(3)) },
            seed: UInt64(id))
    }

    static func visit(_ payload: [UInt8], _ checkIn: Double, _ checkOut: Double?, lastSeen: Double? = nil, kind: PayloadKind = .herald) -> Visit {
        Visit(
            kind: kind, payload: payload, checkIn: origin + checkIn, lastSeen: origin + (lastSeen ?? checkOut ?? checkIn),
            checkOut: checkOut.map { origin + $0 }, samples: 10, rssiMax: -50, rssiSum: -600)
    }

    /// A: one visit recorded in two pieces. B: recorded, still open. C: a walk-past recorded.
    /// D: missed. E: two visits recorded as one. Plus a phantom of A and one of a stranger.
    static let truth = GroundTruth(
        configuration: VenueConfiguration(visitors: 5, openingHours: 2, seed: 1, walkPasts: 1, origin: origin),
        people: [],
        devices: [
            phone(0, [(0, 1000)]),
            phone(1, [(100, 700)]),
            phone(2, [(0, 40)]),
            phone(3, [(2000, 2600)]),
            phone(4, [(3000, 3300), (4000, 4300)]),
            phone(5, kind: .gaenPhone, [(0, 1000)]),
        ])

    static let diary = [
        visit([0, 0xAA], 10, 400), visit([0, 0xAA], 420, 990),
        visit([1, 0xAA], 105, nil, lastSeen: 690),
        visit([2, 0xAA], 0, 130),
        visit([4, 0xAA], 3004, 4290),
        visit([0, 0xAA], 5000, 5200),
        visit([9, 9, 9], 10, 400),
        visit(AddressRotation(period: 900, phase: 0, seed: 9).rollingProximityIdentifier(ofEpoch: 0), 5, 890, kind: .gaen),
    ]

    @Test func judgesSplitsPhantomsWalkPastsAndMerges() {
        let report = EfficacyReport(truth: Self.truth, diary: Self.diary)
        #expect(report.trueVisits == 6)
        #expect(report.eligibleVisits == 5)
        #expect(report.recalledVisits == 3)
        #expect(report.recall == 3.0 / 5.0)
        #expect(report.diaryVisits == 7)
        #expect(report.precision == 3.0 / 7.0)
        #expect(report.splitVisits == 1)
        #expect(report.phantomVisits == 2)
        #expect(report.walkPastsRecorded == 1)
        #expect(report.mergedVisits == 1)
        #expect(report.byDeviceKind["herald_android"]?.eligibleVisits == 5)
        #expect(report.byDeviceKind["herald_android"]?.recalledVisits == 3)
        #expect(report.byDeviceKind["herald_android"]?.splitVisits == 1)
        #expect(report.gaen.trueVisits == 2)
        #expect(report.gaen.eligibleVisits == 1)
        #expect(report.gaen.recalledVisits == 1)
        #expect(report.gaen.diaryVisits == 1)
        #expect(report.gaen.phantomVisits == 0)
        #expect(report.payloadReads == nil)
    }

    @Test func errorsAreMeasuredFromTheEarliestCheckInToTheLatestCheckOut() {
        let report = EfficacyReport(truth: Self.truth, diary: Self.diary)
        // Check-in errors: A +10, B +5, E +4.
        #expect(report.checkInErrorSeconds.count == 3)
        #expect(report.checkInErrorSeconds.median == 5)
        #expect(abs(report.checkInErrorSeconds.p95! - 9.5) < 1e-9)
        #expect(report.checkInErrorSeconds.max == 10)
        #expect(abs(report.checkInErrorSeconds.meanSigned! - 19.0 / 3) < 1e-9)
        // Check-out errors: A −10, B −10 (open: its last sighting), E +990 (it swallowed E's next visit).
        #expect(report.checkOutErrorSeconds.median == 10)
        #expect(abs(report.checkOutErrorSeconds.p95! - 892) < 1e-9)
        #expect(report.checkOutErrorSeconds.max == 990)
        #expect(abs(report.checkOutErrorSeconds.meanSigned! - 970.0 / 3) < 1e-9)
    }

    @Test func aPerfectDiaryScoresFull() {
        let diary = [
            Self.visit([0, 0xAA], 0, 1000), Self.visit([1, 0xAA], 100, 700), Self.visit([3, 0xAA], 2000, 2600),
            Self.visit([4, 0xAA], 3000, 3300), Self.visit([4, 0xAA], 4000, 4300),
        ]
        let report = EfficacyReport(truth: Self.truth, diary: diary)
        #expect(report.recall == 1)
        #expect(report.precision == 1)
        #expect(report.splitVisits == 0 && report.phantomVisits == 0 && report.mergedVisits == 0)
        #expect(report.walkPastsRecorded == 0)
        #expect(report.checkInErrorSeconds.max == 0)
        #expect(report.gaen.recall == 0)
    }

    @Test func anEmptyDiaryRecallsNothingAndClaimsNothing() {
        let report = EfficacyReport(truth: Self.truth, diary: [])
        #expect(report.recall == 0)
        #expect(report.precision == 1)
        #expect(report.checkInErrorSeconds.median == nil)
    }

    @Test func readsArePerPhoneAndTimedFromArrival() {
        let reads = [
            PayloadRead(time: 30, payload: [0, 0xAA]), PayloadRead(time: 500, payload: [0, 0xAA]),
            PayloadRead(time: 400, payload: [1, 0xAA]), PayloadRead(time: 3100, payload: [4, 0xAA]),
        ]
        let report = EfficacyReport(truth: Self.truth, diary: Self.diary, reads: reads)
        let r = try! #require(report.payloadReads)
        #expect(r.phones == 4)
        #expect(r.phonesRead == 3)
        #expect(r.readsPerPhoneMean == 1)
        #expect(r.readsPerPhoneMax == 2)
        // First reads: A 30 s, B 300 s, E's first visit 100 s; E's second visit had none.
        #expect(r.timeToFirstReadSeconds.count == 3)
        #expect(r.timeToFirstReadSeconds.median == 100)
        #expect(r.timeToFirstReadSeconds.max == 300)
    }

    @Test func percentilesInterpolateBetweenRanks() {
        let values = (1...20).map(Double.init)
        #expect(abs(ErrorStatistics.percentile(95, ofSorted: values)! - 19.05) < 1e-9)
        #expect(ErrorStatistics.percentile(50, ofSorted: [1, 2, 3, 4]) == 2.5)
        #expect(ErrorStatistics.percentile(50, ofSorted: [1, 2, 3]) == 2)
        #expect(ErrorStatistics.percentile(95, ofSorted: [7]) == 7)
        #expect(ErrorStatistics.percentile(0, ofSorted: [1, 5]) == 1)
        #expect(ErrorStatistics.percentile(100, ofSorted: [1, 5]) == 5)
        #expect(ErrorStatistics.percentile(50, ofSorted: []) == nil)
        let stats = ErrorStatistics(signedErrors: [-4, 2, -1, 3])
        #expect(stats.median == 2.5)
        #expect(stats.meanSigned == 0)
    }

    @Test func jsonCarriesTheRequiredKeysOnOneLine() throws {
        let report = EfficacyReport(truth: Self.truth, diary: Self.diary)
        let json = try report.json()
        #expect(!json.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["recall"] as? Double == 0.6)
        #expect(object["precision"] as? Double == 3.0 / 7.0)
        #expect(object["split_visits"] as? Int == 1)
        #expect(object["phantom_visits"] as? Int == 2)
        #expect(object["walk_pasts_recorded"] as? Int == 1)
        let checkIn = try #require(object["check_in_error_seconds"] as? [String: Any])
        #expect(checkIn["median"] as? Double == 5)
        #expect(checkIn["p95"] as? Double == 9.5)
        let checkOut = try #require(object["check_out_error_seconds"] as? [String: Any])
        #expect(checkOut["median"] as? Double == 10)
        // It decodes back to the same report.
        let decoded = try JSONDecoder().decode(EfficacyReport.self, from: Data(json.utf8))
        #expect(decoded == report)
    }

    @Test func textNamesTheHeadlineFigures() {
        let text = EfficacyReport(truth: Self.truth, diary: Self.diary).text
        #expect(text.contains("recall           60.0% (3 of 5 recorded)"))
        #expect(text.contains("2 phantom, 1 split, 1 merged, 1 walk-pasts recorded"))
        #expect(text.contains("check-in error   median 5.0 s, p95 9.5 s, max 10.0 s"))
    }
}
