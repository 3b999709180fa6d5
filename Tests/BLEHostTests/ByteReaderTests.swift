import Testing
@testable import BLEHost

@Suite struct ByteReaderTests {
    @Test func readsLittleEndianAndAdvances() throws {
        var r = ByteReader([0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xFF])
        #expect(try r.readU8() == 0x01)
        #expect(try r.readLE16() == 0x1234)
        #expect(try r.readLE32() == 0x1234_5678)
        #expect(try r.readI8() == -1)
        #expect(r.isEmpty)
    }

    @Test func truncatedReadThrowsAndLeavesCursor() {
        var r = ByteReader([0x01])
        #expect(throws: DecodeError.self) { try r.readLE16("handle") }
        #expect(r.remaining == 1)
        do {
            _ = try r.readLE32("length")
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .truncated)
            #expect(error.field == "length")
        }
    }

    @Test func slicesShareStorageAndKeepIndices() throws {
        let data: [UInt8] = [9, 1, 2, 3, 4]
        var r = ByteReader(data)
        _ = try r.readU8()
        let s = try r.readBytes(3)
        #expect(Array(s) == [1, 2, 3])
        var inner = ByteReader(s)
        #expect(try inner.readLE16() == 0x0201)
        #expect(r.readRest() == [4])
        #expect(throws: DecodeError.self) { try r.expectEnd("x"); _ = try r.readU8() }
    }

    @Test func writersRoundTrip() throws {
        var out = [UInt8]()
        out.appendLE16(0xBEEF)
        out.appendLE24(0x123456)
        out.appendLE32(0xDEADBEEF)
        out.appendLE64(0x0102030405060708)
        out.appendBE32(0xCAFEBABE)
        var r = ByteReader(out)
        #expect(try r.readLE16() == 0xBEEF)
        #expect(try r.readLE24() == 0x123456)
        #expect(try r.readLE32() == 0xDEADBEEF)
        #expect(try r.readLE64() == 0x0102030405060708)
        #expect(try r.readBE32() == 0xCAFEBABE)
    }

    @Test func hex() {
        #expect(Hex.encode([0x30, 0x3A, 0xFF]) == "303aff")
        #expect(Hex.decode("30 3A:ff") == [0x30, 0x3A, 0xFF])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}

@Suite struct IdentifierTests {
    @Test func addressTextAndWire() throws {
        let a = try #require(BluetoothAddress("00:AA:01:02:00:42"))
        #expect(a.littleEndianBytes == [0x42, 0x00, 0x02, 0x01, 0xAA, 0x00])
        #expect(a.description == "00:AA:01:02:00:42")
        var r = ByteReader(a.littleEndianBytes)
        #expect(try r.readAddress() == a)
        #expect(BluetoothAddress("00:AA:01:02:00") == nil)
        #expect(BluetoothAddress("00:AA:01:02:00:4G") == nil)
        #expect(BluetoothAddress(rawValue: 0xC0_0000_0000_00).randomAddressKind == .staticAddress)
    }

    @Test func uuidForms() throws {
        let herald = try #require(BluetoothUUID("FCF6"))
        #expect(herald.shortValue == 0xFCF6)
        #expect(herald.description == "FCF6")
        #expect(herald.fullString == "0000fcf6-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID("0000FCF6-0000-1000-8000-00805F9B34FB") == herald)
        #expect(try BluetoothUUID(littleEndianBytes: [0xF6, 0xFC]) == herald)

        let legacy = try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        #expect(legacy.shortValue == nil)
        let wire = legacy.littleEndianBytes128
        #expect(wire.first == 0x9B && wire.last == 0x42)
        #expect(try BluetoothUUID(littleEndianBytes: wire) == legacy)
        var short = [UInt8]()
        herald.appendShortestForm(to: &short)
        #expect(short == [0xF6, 0xFC])
        #expect(throws: DecodeError.self) { try BluetoothUUID(littleEndianBytes: [1, 2, 3]) }
        #expect(BluetoothUUID("xyz") == nil)
    }
}
