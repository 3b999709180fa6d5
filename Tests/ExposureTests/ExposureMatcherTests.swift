import Foundation
import Testing
import VenueDiary
@testable import Exposure

/// The matcher's rules: identity, the ±2 h tolerance, decoys; the report's windows and score.
struct ExposureMatcherTests {
    static let tek = hex("75c734c6dd1a782de7a965da5eb93125")
    static let enin: UInt32 = 2_642_976
    static let key = DiagnosisKey(keyData: tek, transmissionRiskLevel: 6, rollingStartIntervalNumber: enin, rollingPeriod: 144, reportType: .confirmedTest, daysSinceOnsetOfSymptoms: 1)

    /// The RPI of interval `index` (official vectors, so the visit's payload is written as a value).
    static let rpi0 = hex("8be6cd371c5c891604bfbe49df845096")
    static let rpi4 = hex("b3b85a69ebaec78db739852d1f34e0fa")
    static let aem4 = hex("5668c474")

    static func visit(_ id: Int64, _ payload: [UInt8], at start: Double, minutes: Double = 10, rssi: Int = -60, metadata: [UInt8]? = nil) -> Visit {
        Visit(
            id: id, kind: .gaen, payload: payload, checkIn: start, lastSeen: start + minutes * 60, checkOut: start + minutes * 60,
            samples: 4, rssiMax: rssi + 2, rssiSum: 4 * rssi, metadata: metadata)
    }

    static func time(_ interval: UInt32) -> Double { Double(interval) * 600 }

    @Test func matchesWithinItsInterval() throws {
        let visits = [
            Self.visit(1, Self.rpi4, at: Self.time(Self.enin + 4) + 60, metadata: Self.aem4),
            Self.visit(2, randomKey(), at: Self.time(Self.enin + 4)),  // a decoy at the same time
        ]
        let match = try #require(ExposureMatcher(visits: visits).match(Self.key))
        #expect(match.visits.map(\.visit.id) == [1])
        #expect(match.visits.first?.interval == Self.enin + 4)
    }

    @Test func toleranceIsTwoHours() {
        let intervalStart = Self.time(Self.enin + 4)
        func matches(_ start: Double, minutes: Double = 5) -> Bool {
            ExposureMatcher(visits: [Self.visit(1, Self.rpi4, at: start, minutes: minutes)]).match(Self.key) != nil
        }
        #expect(matches(intervalStart + 600 + 7200 - 1))  // heard just under 2 h after its interval
        #expect(matches(intervalStart - 7200 - 300 + 1, minutes: 5))  // ends just under 2 h before it
        #expect(!matches(intervalStart + 600 + 3 * 3600))  // 3 h after
        #expect(!matches(intervalStart - 3 * 3600 - 300))  // 3 h before
    }

    @Test func decoysNeverMatch() {
        var visits: [Visit] = []
        for i in 0..<2000 { visits.append(Self.visit(Int64(i), randomKey(), at: Self.time(Self.enin) + Double(i * 30))) }
        // A visit of another kind with the very identifier is not a GAEN sighting.
        var herald = Self.visit(9999, Self.rpi0, at: Self.time(Self.enin))
        herald.kind = .herald
        visits.append(herald)
        #expect(ExposureMatcher(visits: visits).match(Self.key) == nil)
    }

    @Test func reportFieldsAndWindows() throws {
        let t4 = Self.time(Self.enin + 4)
        let visits = [
            Self.visit(1, Self.rpi4, at: t4, minutes: 10, rssi: -60, metadata: Self.aem4),
            // The same identifier again 10 minutes later (touching the first: one window).
            Self.visit(2, Self.rpi4, at: t4 + 600, minutes: 5, rssi: -70, metadata: Self.aem4),
            Self.visit(3, Self.rpi0, at: Self.time(Self.enin) + 3600 * 1.5, minutes: 4, rssi: -80, metadata: nil),
        ]
        let matcher = ExposureMatcher(visits: visits)
        let report = ExposureReport(
            files: [], keys: 1, diaryIdentifiers: matcher.identifierCount, matches: matcher.match([Self.key]), risk: RiskConfiguration(),
            generatedAt: 0)
        let e = try #require(report.exposures.first)
        #expect(e.key == "75c734c6dd1a782de7a965da5eb93125")
        #expect(e.visits == [1, 2, 3])
        #expect(e.minutes == 19)
        #expect(e.txPower == 8)  // the vectors' metadata 40 08 00 00
        // Only visits with metadata have an attenuation: strongest -58, mean of 8 samples -65.
        #expect(e.attenuationDB == ExposureReport.Attenuation(min: 66, mean: 73))
        #expect(e.firstSeen == "2020-04-02T00:40:00Z")
        #expect(e.lastSeen == "2020-04-02T01:34:00Z")
        #expect(report.windows.map(\.start) == ["2020-04-02T00:40:00Z", "2020-04-02T01:30:00Z"])
        #expect(report.windows.map(\.end) == ["2020-04-02T00:55:00Z", "2020-04-02T01:34:00Z"])
        // Risk (defaults: thresholds 55/63 dB, weights 100/50/0): visit 1 attenuation 68 and
        // visit 2 attenuation 78 are far (0), visit 3 has none (medium, 50 %): 4 × 0.5 = 2.0.
        #expect(e.riskScore == 2)
    }

    /// The worked example of docs/exposure.md.
    @Test func riskScoreWorkedExample() {
        let risk = RiskConfiguration(
            attenuationThresholds: [55, 63], attenuationWeights: [100, 50, 0], transmissionRiskWeights: [10, 20, 30, 40, 50, 60, 70, 80],
            onsetDays: -2...9, outsideOnsetWeight: 25)
        let key = DiagnosisKey(keyData: Self.tek, transmissionRiskLevel: 6, rollingStartIntervalNumber: 0, daysSinceOnsetOfSymptoms: 11)
        // 20 min near (50 dB), 30 min medium (60 dB), 15 min far (70 dB), 10 min unknown.
        let visits: [(minutes: Double, attenuation: Double?)] = [(20, 50), (30, 60), (15, 70), (10, nil)]
        // (20 × 1 + 30 × 0.5 + 15 × 0 + 10 × 0.5) × 0.6 × 0.25 = 40 × 0.15 = 6.0
        #expect(risk.score(visits: visits, key: key) == 6)
        var inWindow = key
        inWindow.daysSinceOnsetOfSymptoms = 3
        #expect(risk.score(visits: visits, key: inWindow) == 24)
    }

    @Test func unionMergesOverlappingAndTouching() {
        let merged = ExposureReport.union([(10, 20), (0, 5), (5, 7), (15, 30), (31, 40)])
        #expect(merged.map { [$0.0, $0.1] } == [[0, 7], [10, 30], [31, 40]])
    }

    @Test func nhsRiskyVenuesCSV() {
        let t4 = Self.time(Self.enin + 4)
        let matcher = ExposureMatcher(visits: [Self.visit(1, Self.rpi4, at: t4, minutes: 10)])
        let report = ExposureReport(files: [], keys: 1, diaryIdentifiers: 1, matches: matcher.match([Self.key]), risk: RiskConfiguration(), generatedAt: 0)
        #expect(report.nhsRiskyVenues(venueID: "123123") == """
            # venue_id, start_time, end_time, message_type, optional_parameter
            "123123", "2020-04-02T00:40:00Z", "2020-04-02T00:50:00Z", "M1", ""

            """)
    }

    /// Keys matched one file at a time keep the key set's rules: a key counts once, a plain key met
    /// again changes nothing, a revised one replaces it (and may stop or start matching).
    @Test func streamingMatchesKeepTheKeySetsRules() {
        let visits = [Self.visit(1, Self.rpi4, at: Self.time(Self.enin + 4) + 60, metadata: Self.aem4), Self.visit(2, randomKey(), at: Self.time(Self.enin))]
        let matcher = ExposureMatcher(visits: visits)
        let decoy = DiagnosisKey(keyData: randomKey(), rollingStartIntervalNumber: Self.enin)
        var again = Self.key
        again.transmissionRiskLevel = 2
        var revised = Self.key
        revised.transmissionRiskLevel = 3
        revised.reportType = .revoked
        var moved = Self.key
        moved.rollingStartIntervalNumber = Self.enin + 1000  // out of the diary's span: no match
        let files: [[(DiagnosisKey, Bool)]] = [
            [(decoy, false), (Self.key, false)],
            [(again, false), (revised, true)],
            [(moved, true), (decoy, false)],
            [(Self.key, true)],
        ]
        var set = DiagnosisKeySet()
        var streaming = StreamingKeyMatches(matcher: matcher)
        for (n, file) in files.enumerated() {
            for (key, isRevised) in file {
                set.add(key, revised: isRevised)
                streaming.add(key, revised: isRevised)
            }
            let want = matcher.match(set.keys)
            let got = streaming.result
            #expect(streaming.keyCount == set.keys.count, "after file \(n)")
            #expect(got.map(\.key) == want.map(\.key), "after file \(n)")
            #expect(got.map { $0.visits.map(\.visit.id) } == want.map { $0.visits.map(\.visit.id) }, "after file \(n)")
        }
        #expect(streaming.keyCount == 2)
        #expect(streaming.result.map(\.key) == [Self.key])
    }
}
