import Testing
@testable import BLEHost

@Suite struct GATTDatabaseTests {
    @Test func handlesAreSequentialFromGAPThenGATTThenApplication() throws {
        let db = try Fixture.database()
        #expect(db.attributes.map(\.handle) == Array(1...19))
        #expect(db.attributes.map(\.type.description) == [
            "2800", "2803", "2A00", "2803", "2A01",
            "2800", "2803", "2A05", "2902",
            "2800", "2803", Fixture.signal.fullString, "2803", Fixture.payload.fullString,
            "2800", "2803", "2A19", "2902", "2901",
        ])
        #expect(db.attribute(1)?.value == [0x00, 0x18])
        #expect(db.attribute(1)?.role == .primaryService(endGroupHandle: 5))
        #expect(db.attribute(6)?.role == .primaryService(endGroupHandle: 9))
        #expect(db.attribute(10)?.role == .primaryService(endGroupHandle: 14))
        #expect(db.attribute(15)?.role == .primaryService(endGroupHandle: 19))
        #expect(db.attribute(15)?.value == Fixture.testService.littleEndianBytes128)
        // Declarations: properties, value handle, UUID.
        #expect(db.attribute(2)?.value == h("02 0300 002a"))
        #expect(db.attribute(7)?.value == h("20 0800 052a"))
        #expect(db.attribute(11)?.value == [0x0C, 0x0C, 0x00] + Fixture.signal.littleEndianBytes128)
        #expect(db.attribute(3)?.value == Array("venue".utf8))
        #expect(db.attribute(5)?.value == [0, 0])
        #expect(db.attribute(19)?.value == Array("Level".utf8))
        #expect(db.attribute(0) == nil && db.attribute(20) == nil)
    }

    @Test func permissionsFollowProperties() throws {
        let db = try Fixture.database()
        #expect(db.attribute(8)?.permissions == [])  // Service Changed: indicate only
        #expect(db.attribute(9)?.permissions == [.read, .write])
        #expect(db.attribute(12)?.permissions == [.write])
        #expect(db.attribute(14)?.permissions == [.read])
        #expect(db.attribute(2)?.permissions == [.read])
    }

    @Test func cccdOnlyWithNotifyOrIndicate() throws {
        let db = try Fixture.database()
        let signal = try #require(db.characteristic(service: Fixture.heraldService, uuid: Fixture.signal))
        #expect(signal.clientConfigurationHandle == nil)
        #expect(signal.declarationHandle == 11 && signal.valueHandle == 12 && signal.endHandle == 12)
        let level = try #require(db.characteristic(service: Fixture.testService, uuid: Fixture.level))
        #expect(level.clientConfigurationHandle == 18 && level.endHandle == 19)
        #expect(db.serviceChanged?.clientConfigurationHandle == 9)
        #expect(db.characteristic(valueHandle: 17) == level)
        #expect(db.characteristic(valueHandle: 18) == nil)
    }

    @Test func dynamicValuesAreReplaceableAndBounded() throws {
        var db = try Fixture.database()
        try db.setValue([1, 2, 3], forCharacteristic: 14)
        #expect(db.attribute(14)?.value == [1, 2, 3])
        #expect(throws: GATTDatabaseError.notDynamic(handle: 3)) { try db.setValue([1], forCharacteristic: 3) }
        #expect(throws: GATTDatabaseError.notDynamic(handle: 99)) { try db.setValue([1], forCharacteristic: 99) }
        #expect(throws: GATTDatabaseError.valueTooLong(Fixture.payload, length: 513)) {
            try db.setValue([UInt8](repeating: 0, count: 513), forCharacteristic: 14)
        }
        #expect(throws: GATTDatabaseError.valueTooLong(Fixture.payload, length: 600)) {
            try Fixture.database(payload: [UInt8](repeating: 0, count: 600))
        }
    }
}
