import BLEHost
import Testing

@testable import Simulation

@Suite struct RadioModelTests {
    @Test func meanRSSIFollowsLogDistancePathLoss() {
        let radio = RadioModel(pathLossExponent: 2.5)
        #expect(radio.meanRSSI(measuredPower: -60, distance: 1) == -60)
        #expect(abs(radio.meanRSSI(measuredPower: -60, distance: 10) - -85) < 1e-9)
        #expect(abs(radio.meanRSSI(measuredPower: -60, distance: 100) - -110) < 1e-9)
        // Closer than 10 cm counts as 10 cm.
        #expect(radio.meanRSSI(measuredPower: -60, distance: 0) == radio.meanRSSI(measuredPower: -60, distance: 0.1))
    }

    @Test func packetsAreLostAtTheConfiguredRateAndNoisyAroundTheMean() {
        let radio = RadioModel(pathLossExponent: 2, shadowingSD: 4, advertLoss: 0.1, sensitivity: -100)
        var random = SimulationRandom(seed: 2)
        let n = 100_000
        let received = (0..<n).compactMap { _ in radio.receive(measuredPower: -60, distance: 5, using: &random) }
        let lossRate = 1 - Double(received.count) / Double(n)
        #expect(abs(lossRate - 0.1) < 0.005)
        let mean = Double(received.reduce(0, +)) / Double(received.count)
        let expected = radio.meanRSSI(measuredPower: -60, distance: 5)
        #expect(abs(mean - expected) < 0.1)
        let sd = (received.map { (Double($0) - mean) * (Double($0) - mean) }.reduce(0, +) / Double(received.count)).squareRoot()
        #expect(abs(sd - 4) < 0.1)
    }

    @Test func nothingBelowSensitivityAndRSSIStaysInHCIRange() {
        let radio = RadioModel(pathLossExponent: 2, shadowingSD: 3, advertLoss: 0, sensitivity: -90)
        var random = SimulationRandom(seed: 4)
        let far = (0..<10_000).compactMap { _ in radio.receive(measuredPower: -60, distance: 40, using: &random) }
        // Mean −92 dBm: only the luckier packets are heard, none below −90.
        #expect(!far.isEmpty && far.count < 5_000)
        #expect(far.allSatisfy { $0 >= -90 })
        let loud = (0..<1000).compactMap { _ in radio.receive(measuredPower: 40, distance: 0.1, using: &random) }
        #expect(loud.count == 1000 && loud.allSatisfy { $0 == 20 })
    }

    @Test func addressesRotateAtEpochBoundaries() {
        let rotation = AddressRotation(period: 600, phase: 100, seed: 77)
        #expect(rotation.epoch(at: 0) == 0)
        #expect(rotation.epoch(at: 499.9) == 0)
        #expect(rotation.epoch(at: 500) == 1)
        #expect(rotation.start(ofEpoch: 1) == 500)
        #expect(rotation.end(ofEpoch: 1) == 1100)
        #expect(rotation.address(at: 10) == rotation.address(at: 499))
        #expect(rotation.address(at: 499) != rotation.address(at: 501))
        #expect(rotation.address(at: 10).randomAddressKind == .resolvablePrivate)
        #expect(rotation.rollingProximityIdentifier(ofEpoch: 0) != rotation.rollingProximityIdentifier(ofEpoch: 1))
        #expect(rotation.rollingProximityIdentifier(ofEpoch: 3).count == 16)
        #expect(rotation.encryptedMetadata(ofEpoch: 3).count == 4)
        let fixed = AddressRotation.fixed(seed: 77)
        #expect(fixed.address(at: 0) == fixed.address(at: 1e6))
        #expect(fixed.address(at: 0).randomAddressKind == .staticAddress)
        // Another device, other addresses.
        #expect(AddressRotation(period: 600, phase: 100, seed: 78).address(at: 10) != rotation.address(at: 10))
    }

    static func device(
        id: Int, interval: Double, presence: [(Double, Double)], rotation: AddressRotation, metres: Double = 3
    ) -> SimulatedDevice {
        SimulatedDevice(
            id: id, kind: .heraldIPhoneForeground, owner: id, payload: [UInt8(id)], advert: .heraldService,
            advertInterval: interval, signalWriteInterval: nil, rotation: rotation, measuredPower: -60,
            presence: presence.map { PresenceSegment(start: $0.0, end: $0.1, path: .fixed(metres)) },
            seed: UInt64(100 + id))
    }

    @Test func advertsComeOnlyWhileInRangeAtTheDevicesInterval() {
        let devices = [
            Self.device(id: 0, interval: 0.25, presence: [(10, 70), (200, 260)], rotation: AddressRotation(period: 30, phase: 0, seed: 1)),
            Self.device(id: 1, interval: 1.0, presence: [(0, 300)], rotation: .fixed(seed: 2)),
        ]
        var stream = AdvertStream(devices: devices, radio: RadioModel(advertLoss: 0))
        var times: [[Double]] = [[], []]
        var last = -Double.infinity
        while let advert = stream.next() {
            #expect(advert.time >= last)
            last = advert.time
            times[advert.device].append(advert.time)
            #expect(advert.address == devices[advert.device].rotation.address(at: advert.time))
            #expect(devices[advert.device].segment(at: advert.time) != nil)
        }
        // 60 s at 250 ms + 0–10 ms per event: about 234 events per segment.
        let perSegment = times[0].filter { $0 < 100 }.count
        #expect(perSegment >= 230 && perSegment <= 240)
        for (a, b) in zip(times[1], times[1].dropFirst()) {
            #expect(b - a >= 1.0 && b - a <= 1.010 + 1e-9)
        }
        #expect(stream.counters.transmitted == times[0].count + times[1].count)
        #expect(stream.counters.lost == 0)
    }

    @Test func theStreamRepeatsForASeedAndLosesItsShare() {
        let truth = VenueModel.generate(VenueConfiguration(visitors: 10, openingHours: 1, seed: 3))
        var a = AdvertStream(devices: truth.devices, radio: RadioModel())
        var b = AdvertStream(devices: truth.devices, radio: RadioModel())
        var count = 0
        while let x = a.next() {
            #expect(x == b.next())
            count += 1
        }
        #expect(b.next() == nil)
        #expect(count > 10_000)
        let lossRate = Double(a.counters.lost) / Double(a.counters.transmitted)
        #expect(lossRate > 0.09 && lossRate < 0.12)
    }

    @Test func nextNotAfterStopsAtTheGivenTime() {
        let devices = [Self.device(id: 0, interval: 1, presence: [(0, 100)], rotation: .fixed(seed: 1))]
        var stream = AdvertStream(devices: devices, radio: RadioModel(advertLoss: 0))
        var early = 0
        while let advert = stream.next(notAfter: 10) {
            #expect(advert.time <= 10)
            early += 1
        }
        #expect(early >= 9 && early <= 10)
        #expect(stream.next()!.time > 10)
    }
}
