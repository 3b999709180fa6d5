import Testing
@testable import Herald

/// Measurements held until a phone's payload is read are stored in 8 bytes and come back as taken.
@Suite struct BufferedMeasurementTests {
    @Test func roundTripKeepsTimeAndRSSI() {
        let origin = 1_795_197_600.25
        for (time, rssi) in [(origin, -60 as Int?), (origin + 1799.875, nil), (origin + 0.0625, -127), (origin + 12.5, 20)] {
            let back = BufferedMeasurement(time: time, rssi: rssi, since: origin).measurement(since: origin)
            #expect(abs(back.time - time) < 0.001, "\(time)")
            #expect(back.rssi == rssi)
        }
        #expect(MemoryLayout<BufferedMeasurement>.stride == 8)
    }
}
