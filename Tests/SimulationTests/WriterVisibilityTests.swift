import Foundation
import Testing
import VenueDiary

@testable import Simulation

/// Which stays of a phone that cannot advertise a node can know (``WriterVisibility``), and how
/// judging treats the ones it cannot (``EfficacyReport/hiddenVisits``).
@Suite struct WriterVisibilityTests {
    /// Epochs of 600 s with a boundary at 116 s: [-484, 116), [116, 716), …
    static let rotation = AddressRotation(period: 600, phase: 484, seed: 3)

    @Test func aStayWhoseAddressRotatesBeforeTheNextPayloadWriteIsKnownUntilTheRotation() {
        // Month run, day 5: the payload written 3 s in, the address rotating 116 s in, the stay
        // 240 s, the next payload write (300 s on) after the phone left.
        let span = WriterVisibility.identifiedSpan(arrive: 0, leave: 240, rotation: Self.rotation, payloadWrites: [3])
        #expect(span == 116)
        #expect(WriterVisibility.isHidden(arrive: 0, leave: 240, rotation: Self.rotation, payloadWrites: [3], checkIn: 120))
        #expect(!WriterVisibility.isHidden(arrive: 0, leave: 240, rotation: Self.rotation, payloadWrites: [3], checkIn: 115))
    }

    @Test func aPayloadWriteAfterARotationNamesItsAddressUntilTheNext() {
        // Epochs [-484, 116), [116, 716), [716, 1316): the writes at 303 and 603 name the second
        // address (its earlier RSSI writes are attributed then); the third's, from 716 until the
        // phone leaves at 900 before its next payload write, stay anonymous.
        let span = WriterVisibility.identifiedSpan(arrive: 0, leave: 900, rotation: Self.rotation, payloadWrites: [3, 303, 603])
        #expect(span == 716)
        #expect(!WriterVisibility.isHidden(arrive: 0, leave: 900, rotation: Self.rotation, payloadWrites: [3, 303, 603], checkIn: 120))
    }

    @Test func withoutAPayloadWriteInTheStayNothingIsKnown() {
        #expect(WriterVisibility.identifiedSpan(arrive: 0, leave: 240, rotation: Self.rotation, payloadWrites: []) == 0)
        // A write of another day, in an epoch that does not reach into the stay.
        #expect(WriterVisibility.identifiedSpan(arrive: 86_400, leave: 86_640, rotation: Self.rotation, payloadWrites: [3]) == 0)
        #expect(WriterVisibility.isHidden(arrive: 86_400, leave: 86_640, rotation: Self.rotation, payloadWrites: [3], checkIn: 120))
    }

    @Test func anAddressThatNeverRotatesIsKnownForTheWholeStay() {
        let fixed = AddressRotation.fixed(seed: 1)
        #expect(WriterVisibility.identifiedSpan(arrive: 10, leave: 250, rotation: fixed, payloadWrites: [12]) == 240)
    }

    // MARK: Judging

    static let origin = 1_000_000.0

    static func writer(_ id: Int, _ start: Double, _ end: Double) -> SimulatedDevice {
        SimulatedDevice(
            id: id, kind: .heraldAndroidWriter, owner: id, payload: [UInt8(id), 0xBB], advert: .heraldService,
            advertInterval: 0.25, signalWriteInterval: 6.4, rotation: rotation, measuredPower: -60,
            presence: [PresenceSegment(start: start, end: end, path: .fixed(3))], seed: UInt64(id))
    }

    static let truth = GroundTruth(
        configuration: VenueConfiguration(visitors: 2, openingHours: 1, seed: 1, walkPasts: 0, origin: origin),
        people: [],
        devices: [writer(0, 0, 240), writer(1, 0, 900)])

    static func visit(_ id: Int, _ checkIn: Double, _ checkOut: Double) -> Visit {
        Visit(
            kind: .herald, payload: [UInt8(id), 0xBB], checkIn: origin + checkIn, lastSeen: origin + checkOut,
            checkOut: origin + checkOut, samples: 10, rssiMax: -50, rssiSum: -600)
    }

    @Test func aHiddenStayThatWasNotRecordedIsNotHeldAgainstRecall() {
        let writes: [Int: [Double]] = [0: [3], 1: [3, 303, 603]]
        let report = EfficacyReport(truth: Self.truth, diary: [Self.visit(1, 3, 897)], payloadWrites: writes)
        #expect(report.hiddenVisits == 1)
        #expect(report.eligibleVisits == 1)
        #expect(report.recalledVisits == 1)
        #expect(report.recall == 1)
        #expect(report.byDeviceKind["herald_android_writer"]?.eligibleVisits == 1)
        #expect(report.text.contains("1 hidden"))
        // Without the writes nothing is hidden: the same diary misses one visit of two.
        let unjudged = EfficacyReport(truth: Self.truth, diary: [Self.visit(1, 3, 897)])
        #expect(unjudged.hiddenVisits == 0)
        #expect(unjudged.eligibleVisits == 2)
        #expect(unjudged.recall == 0.5)
    }

    @Test func aHiddenStayThatWasRecordedAllTheSameCountsAsRecalled() {
        let writes: [Int: [Double]] = [0: [3], 1: [3, 303, 603]]
        let report = EfficacyReport(truth: Self.truth, diary: [Self.visit(0, 3, 230), Self.visit(1, 3, 897)], payloadWrites: writes)
        #expect(report.hiddenVisits == 0)
        #expect(report.eligibleVisits == 2)
        #expect(report.recalledVisits == 2)
        #expect(report.precision == 1)
    }
}
