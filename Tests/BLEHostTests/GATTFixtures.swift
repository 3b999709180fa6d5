@testable import BLEHost

/// The database the server tests script against (handles in brackets):
/// GAP [1–5]: name [3] "venue", appearance [5]; GATT [6–9]: Service Changed [8] + CCCD [9];
/// Herald 0xFCF6 [10–14]: signal (write, write without response) [12], payload (read, dynamic,
/// 400 bytes) [14]; test service (128-bit) [15–19]: level (read, notify) [17] + CCCD [18] + user
/// description [19].
enum Fixture {
    static let heraldService = BluetoothUUID(0xFCF6 as UInt16)
    static let signal = BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!
    static let payload = BluetoothUUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")!
    static let testService = BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b")!
    static let level = BluetoothUUID(0x2A19 as UInt16)
    static let payloadBytes: [UInt8] = (0..<400).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }

    static func database(payload value: [UInt8] = payloadBytes) throws -> GATTDatabase {
        try GATTDatabase(
            deviceName: "venue", appearance: 0x0000,
            services: [
                GATTServiceDescription(uuid: heraldService, characteristics: [
                    .init(uuid: signal, properties: [.write, .writeWithoutResponse]),
                    .init(uuid: payload, properties: .read, value: .dynamic(initial: value)),
                ]),
                GATTServiceDescription(uuid: testService, characteristics: [
                    .init(uuid: level, properties: [.read, .notify], value: .dynamic(initial: [100]), userDescription: "Level")
                ]),
            ])
    }

    /// A Herald-style signal validator: RSSI writes (0x02) must be exactly 3 bytes; the RSSI it
    /// decodes travels with the write (``GATTWrite/decoded``).
    static func validateSignal(_ write: inout GATTWrite) -> ATTErrorCode? {
        guard write.characteristic.uuid == signal, write.value.first == 0x02 else { return nil }
        guard write.value.count == 3 else { return .invalidAttributeValueLength }
        write.decoded = Int(Int16(bitPattern: UInt16(write.value[1]) | UInt16(write.value[2]) << 8))
        return nil
    }
}
