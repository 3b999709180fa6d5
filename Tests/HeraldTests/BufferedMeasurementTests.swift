import BLEHost
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

    /// A crowd keeps tens of thousands of records; the table's dictionary pays the stride for
    /// every slot. The fields are ordered so that the small ones pack (176 bytes before).
    @Test func recordsArePacked() {
        #expect(MemoryLayout<Target>.stride == 32)
        #expect(MemoryLayout<TargetRecord>.stride <= 104)
    }

    /// What the record stores in small fields comes back as set.
    @Test func compactFieldsRoundTrip() {
        var record = TargetRecord(target: Target(id: TargetID(rawValue: 1), address: BluetoothAddress(rawValue: 1), addressType: .random), source: .herald, now: 5)
        #expect(record.payloadReadAt == nil && record.lastSharedAt == nil && record.lastRSSI == nil && record.failures == 0)
        record.payloadReadAt = 7.5
        record.lastSharedAt = 0
        record.lastRSSI = -127
        record.failures = 6
        record.shareRound = 65_537
        #expect(record.payloadReadAt == 7.5 && record.lastSharedAt == 0 && record.lastRSSI == -127 && record.failures == 6 && record.shareRound == 1)
        record.lastRSSI = 20
        record.payloadReadAt = nil
        #expect(record.lastRSSI == 20 && record.payloadReadAt == nil)
    }
}
