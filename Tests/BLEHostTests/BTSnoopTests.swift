import Testing
@testable import BLEHost

@Suite struct BTSnoopTests {
    @Test func headerIsTheBlueZLayout() throws {
        let bytes = BTSnoopHeader(datalink: .h4).bytes
        #expect(Hex.encode(bytes) == "6274736e6f6f7000" + "00000001" + "000003ea")
        var r = ByteReader(bytes)
        #expect(try BTSnoopHeader.read(from: &r) == BTSnoopHeader(version: 1, datalink: .h4))
        #expect(r.isEmpty)
    }

    @Test func headerRejectsOtherFiles() {
        var r = ByteReader(Array("btsnoqp\0".utf8) + [0, 0, 0, 1, 0, 0, 3, 0xea])
        #expect(throws: DecodeError.self) { try BTSnoopHeader.read(from: &r) }
        #expect(r.remaining == 16)
        var v2 = ByteReader(BTSnoopHeader.magic + [0, 0, 0, 2, 0, 0, 3, 0xea])
        #expect(throws: DecodeError.self) { try BTSnoopHeader.read(from: &v2) }
    }

    @Test func timestampEpochIsYearZero() {
        // 2000-01-01 00:00:00 UTC is the BlueZ offset itself; the Unix epoch is 0x00DCDDB30F2F8000.
        #expect(BTSnoopTimestamp(unixMicroseconds: 946_684_800_000_000).rawValue == 0x00E0_3AB4_4A67_6000)
        #expect(BTSnoopTimestamp(unixMicroseconds: 0).rawValue == 0x00DC_DDB3_0F2F_8000)
        #expect(BTSnoopTimestamp(unixMicroseconds: 1_700_000_000_123_456).unixMicroseconds == 1_700_000_000_123_456)
    }

    @Test func flagsByTypeAndDirection() {
        typealias F = BTSnoopRecord.Flags
        #expect(F(packetType: .command, direction: .sent).rawValue == 0x02)
        #expect(F(packetType: .event, direction: .received).rawValue == 0x03)
        #expect(F(packetType: .acl, direction: .sent).rawValue == 0x00)
        #expect(F(packetType: .acl, direction: .received).rawValue == 0x01)
        #expect(F(rawValue: 3).direction == .received)
    }

    @Test func recordIsBigEndianAndRoundTrips() throws {
        let packet = H4Packet(type: .command, body: [0x03, 0x0c, 0x00])
        let record = BTSnoopRecord(packet: packet, direction: .sent, timestamp: BTSnoopTimestamp(rawValue: 0x0102_0304_0506_0708))
        let bytes = record.bytes
        #expect(
            Hex.encode(bytes)
                == "00000004" + "00000004" + "00000002" + "00000000" + "0102030405060708" + "01030c00")
        var r = ByteReader(bytes + bytes)
        #expect(try BTSnoopRecord.read(from: &r) == record)
        #expect(try BTSnoopRecord.read(from: &r) == record)
        #expect(try BTSnoopRecord.read(from: &r) == nil)
    }

    @Test func cutRecordThrowsAndLeavesTheCursor() {
        let bytes = BTSnoopRecord(
            packet: H4Packet(type: .event, body: [0x0e, 0x01, 0x01]), direction: .received,
            timestamp: BTSnoopTimestamp(rawValue: 1)
        ).bytes
        for cut in 1..<bytes.count {
            var r = ByteReader(Array(bytes.prefix(cut)))
            #expect(throws: DecodeError.self) { try BTSnoopRecord.read(from: &r) }
            #expect(r.remaining == cut)
        }
    }
}
