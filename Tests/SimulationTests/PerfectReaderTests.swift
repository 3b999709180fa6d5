import Testing
import VenueDiary

@testable import Simulation

/// The venue model, radio model, presence tracker and efficacy report together, with a reader
/// that knows every received advert's identity at once (no node, no connections): the best any
/// node could do on this air. The real node runs on the simulated air in the simulate tests.
@Suite struct PerfectReaderTests {
    /// Sightings a perfect reader takes from the air, fed to the diary's presence tracker; returns
    /// the finished visits.
    static func perfectDiary(_ truth: GroundTruth, radio: RadioModel = RadioModel()) -> [Visit] {
        let origin = truth.configuration.origin
        var sightings: [Sighting] = []
        var stream = AdvertStream(devices: truth.devices, radio: radio)
        while let advert = stream.next() {
            let device = truth.devices[advert.device]
            if let payload = device.payload {
                sightings.append(Sighting(time: origin + advert.time, kind: .herald, payload: payload, rssi: advert.rssi))
            } else if device.kind == .gaenPhone {
                let rpi = device.rotation.rollingProximityIdentifier(ofEpoch: advert.rotationEpoch)
                sightings.append(Sighting(time: origin + advert.time, kind: .gaen, payload: rpi, rssi: advert.rssi))
            }
        }
        // Phones that cannot advertise write their RSSI every so often once they found the node.
        for device in truth.devices {
            guard let interval = device.signalWriteInterval, let payload = device.payload else { continue }
            for segment in device.presence {
                var t = segment.start + 2
                while t < segment.end {
                    sightings.append(Sighting(time: origin + t, kind: .herald, payload: payload, rssi: -70))
                    t += interval
                }
            }
        }
        sightings.sort { $0.time < $1.time }

        var tracker = PresenceTracker(settings: DiarySettings())
        var visits: [Visit] = []
        func collect() {
            for change in tracker.takeChanges(includingUpdates: false) where change.event == .checkedOut {
                visits.append(change.visit)
            }
        }
        var lastTick = -Double.infinity
        for sighting in sightings {
            if sighting.time - lastTick >= 1 {
                tracker.advance(to: sighting.time)
                collect()
                lastTick = sighting.time
            }
            tracker.record(sighting)
        }
        tracker.closeAll()
        collect()
        return visits
    }

    @Test func aPerfectReaderMeetsTheEfficacyGoals() throws {
        let truth = VenueModel.generate(VenueConfiguration(visitors: 30, openingHours: 2, seed: 21))
        let report = EfficacyReport(truth: truth, diary: Self.perfectDiary(truth))
        #expect(report.eligibleVisits >= 25)
        #expect(report.recall >= 0.995)
        #expect(report.precision == 1)
        #expect(report.splitVisits == 0)
        #expect(report.phantomVisits == 0)
        #expect(report.walkPastsRecorded == 0)
        let checkIn = try #require(report.checkInErrorSeconds.median)
        #expect(checkIn <= 10)
        #expect(try #require(report.checkInErrorSeconds.p95) <= 60)
        // The diary closes a visit at its last sighting: a little before the phone leaves.
        #expect(try #require(report.checkOutErrorSeconds.meanSigned) <= 0)
        #expect(report.gaen.eligibleVisits > 0)
    }

    @Test func theSameSeedGivesTheSameReport() throws {
        let config = VenueConfiguration(visitors: 8, openingHours: 1, seed: 4)
        let a = EfficacyReport(truth: VenueModel.generate(config), diary: Self.perfectDiary(VenueModel.generate(config)))
        let b = EfficacyReport(truth: VenueModel.generate(config), diary: Self.perfectDiary(VenueModel.generate(config)))
        #expect(try a.json() == b.json())
    }

    @Test func heavyLossCostsCheckInTime() throws {
        let truth = VenueModel.generate(VenueConfiguration(visitors: 10, openingHours: 1, seed: 8, mix: .only(.heraldIPhoneBackground)))
        let light = EfficacyReport(truth: truth, diary: Self.perfectDiary(truth, radio: RadioModel(advertLoss: 0.1)))
        let heavy = EfficacyReport(truth: truth, diary: Self.perfectDiary(truth, radio: RadioModel(advertLoss: 0.9)))
        #expect(try #require(heavy.checkInErrorSeconds.meanSigned) > #require(light.checkInErrorSeconds.meanSigned))
    }
}
