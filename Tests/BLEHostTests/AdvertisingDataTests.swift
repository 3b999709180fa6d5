import Testing
@testable import BLEHost

@Suite struct AdvertisingDataParsingTests {
    let herald = BluetoothUUID(0xFCF6 as UInt16)
    let gaen = BluetoothUUID(0xFD6F as UInt16)

    @Test func heraldAndroidAdvert() throws {
        // Flags 0x06, complete 16-bit UUIDs [FCF6], manufacturer 0x05F1 (Herald) + 6-byte pseudo address.
        let ad = AdvertisingData(hexBytes("02 01 06 03 03 f6 fc 09 ff f1 05 a1 a2 a3 a4 a5 a6"))
        #expect(ad.malformation == nil)
        #expect(ad.map(\.type) == [.flags, .completeServiceUUIDs16, .manufacturerSpecificData])
        #expect(ad.flags == [.leGeneralDiscoverable, .brEDRNotSupported])
        #expect(Array(ad.serviceUUIDs) == [herald])
        #expect(ad.serviceUUIDs.contains(herald) && !ad.serviceUUIDs.contains(gaen))
        #expect(ad.manufacturerData(company: 0x05F1) == hexBytes("a1 a2 a3 a4 a5 a6")[...])
        #expect(ad.manufacturerData(company: 0x004C) == nil)
        #expect(ad.localName == nil && ad.txPowerLevel == nil && Array(ad.serviceData).isEmpty)
    }

    @Test func iPhoneBackgroundAdvert() throws {
        // Apple manufacturer data only (the overflow area of a backgrounded app).
        let ad = AdvertisingData(hexBytes("0b ff 4c 00 01 00 00 00 00 00 00 80"))
        #expect(ad.flags == nil)
        #expect(Array(ad.serviceUUIDs).isEmpty)
        let apple = try #require(Array(ad.manufacturerData).first)
        #expect(apple.companyID == 0x004C && Array(apple.data) == hexBytes("01 00 00 00 00 00 00 80"))
    }

    @Test func exposureNotificationAdvert() throws {
        let rpi = (0..<16).map { UInt8($0 + 0x10) }
        let metadata: [UInt8] = [0x40, 0x08, 0x00, 0x00]
        let bytes = hexBytes("02 01 1a 03 03 6f fd 17 16 6f fd") + rpi + metadata
        let ad = AdvertisingData(bytes)
        #expect(ad.malformation == nil)
        #expect(ad.serviceUUIDs.contains(gaen))
        let data = try #require(ad.serviceData(for: gaen))
        #expect(data.count == 20 && Array(data) == rpi + metadata)
        #expect(Array(ad.serviceData).map(\.uuid) == [gaen])
    }

    @Test func otherUUIDWidthsNamesAndPower() throws {
        let uuid128 = try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        let uuid32 = BluetoothUUID(0x1234_5678 as UInt32)
        let bytes = hexBytes("05 04 78 56 34 12") + [0x11, 0x06] + uuid128.littleEndianBytes128
            + hexBytes("05 08 56 65 6e 75 02 0a f4 06 09 56 65 6e 75 65")
        let ad = AdvertisingData(bytes)
        #expect(Array(ad.serviceUUIDs) == [uuid32, uuid128])
        var iterator = ad.serviceUUIDs.makeIterator()
        _ = iterator.next()
        #expect(!iterator.isComplete)  // 0x04 is an incomplete list
        #expect(ad.serviceUUIDs.contains(uuid128))
        #expect(ad.txPowerLevel == -12)
        let name = try #require(ad.localName)
        #expect(name.isComplete && name.string == "Venue")
        #expect(AdvertisingData(hexBytes("05 08 56 65 6e 75")).localName == LocalName(bytes: hexBytes("56 65 6e 75")[...], isComplete: false))
        // Service data with 32- and 128-bit UUIDs.
        let sd = AdvertisingData(hexBytes("07 20 78 56 34 12 aa bb") + [0x12, 0x21] + uuid128.littleEndianBytes128 + [0xCC])
        #expect(Array(sd.serviceData) == [ServiceData(uuid: uuid32, data: [0xAA, 0xBB]), ServiceData(uuid: uuid128, data: [0xCC])])
    }

    @Test func zeroLengthEndsTheData() {
        let ad = AdvertisingData(hexBytes("02 01 06 00 03 03 f6 fc"))
        #expect(ad.map(\.type) == [.flags])
        #expect(ad.malformation == nil)
        #expect(AdvertisingData(hexBytes("00 00 00")).map(\.type).isEmpty)
        #expect(AdvertisingData([UInt8]()).malformation == nil)
    }

    @Test func malformedLengthEndsTheWalkWithAnError() {
        let ad = AdvertisingData(hexBytes("02 01 06 05 ff 4c 00"))
        #expect(ad.map(\.type) == [.flags])
        #expect(ad.flags == .generalDiscoverableLEOnly)
        #expect(ad.malformation?.kind == .truncated)
        #expect(ad.manufacturerData(company: 0x004C) == nil)
        // A single length byte with nothing after it.
        #expect(AdvertisingData(hexBytes("01")).map(\.type) == [])
        #expect(AdvertisingData(hexBytes("01")).malformation != nil)
        // A type with no data is fine; accessors that need data ignore it.
        let empty = AdvertisingData(hexBytes("01 01 01 ff 01 0a 02 16 6f"))
        #expect(empty.malformation == nil && empty.flags == nil && empty.txPowerLevel == nil)
        #expect(Array(empty.manufacturerData).isEmpty && Array(empty.serviceData).isEmpty)
    }

    @Test func oddUUIDListsYieldWholeUUIDs() {
        let ad = AdvertisingData(hexBytes("04 03 f6 fc 6f 02 03 aa 03 02 6f fd"))
        #expect(Array(ad.serviceUUIDs) == [herald, gaen])
    }

    @Test func slicesShareTheAdvertStorage() throws {
        let bytes = hexBytes("02 01 06 09 ff f1 05 a1 a2 a3 a4 a5 a6")
        let ad = AdvertisingData(bytes[...])
        let manufacturer = try #require(Array(ad.manufacturerData).first)
        #expect(manufacturer.data.startIndex == 7)
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(seed: 0xAD)
        for _ in 0..<5000 {
            let count = Int(generator.next() % 40)
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let ad = AdvertisingData(bytes)
            _ = ad.malformation
            _ = ad.flags
            _ = ad.localName?.string
            _ = ad.txPowerLevel
            _ = Array(ad.serviceUUIDs)
            _ = Array(ad.serviceData)
            _ = Array(ad.manufacturerData)
            #expect(ad.reduce(0) { $0 + $1.data.count + 2 } <= count)
        }
    }
}

@Suite struct AdvertisingDataBuilderTests {
    @Test func buildsWhatTheParserReads() throws {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        builder.appendServiceUUIDs([BluetoothUUID(0xFCF6 as UInt16)])
        builder.appendManufacturerData(company: 0x05F1, [1, 2, 3, 4, 5, 6])
        let payload = try builder.build()
        #expect(payload.bytes == hexBytes("02 01 06 03 03 f6 fc 09 ff f1 05 01 02 03 04 05 06"))

        var response = AdvertisingDataBuilder()
        response.appendLocalName("Venue")
        response.appendTxPowerLevel(-4)
        response.appendServiceData(BluetoothUUID(0xFD6F as UInt16), [9, 9])
        let parsed = AdvertisingData(try response.build().bytes)
        #expect(parsed.localName?.string == "Venue" && parsed.txPowerLevel == -4)
        #expect(parsed.serviceData(for: BluetoothUUID(0xFD6F as UInt16)) == [9, 9])
    }

    @Test func mixedUUIDWidthsGetOneListEach() throws {
        let uuid128 = try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        var builder = AdvertisingDataBuilder()
        builder.appendServiceUUIDs([BluetoothUUID(0xFCF6 as UInt16), uuid128, BluetoothUUID(0xFD6F as UInt16)], complete: false)
        let ad = AdvertisingData(try builder.build().bytes)
        #expect(ad.map(\.type) == [.incompleteServiceUUIDs16, .incompleteServiceUUIDs128])
        #expect(Set(ad.serviceUUIDs) == [BluetoothUUID(0xFCF6 as UInt16), uuid128, BluetoothUUID(0xFD6F as UInt16)])
    }

    @Test func overlongDataIsAClearError() throws {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        builder.appendLocalName("A venue name far too long for one advert")
        #expect(throws: AdvertisingPayloadTooLong(length: 45)) { try builder.build() }
        #expect("\(AdvertisingPayloadTooLong(length: 44))".contains("31"))
        #expect(throws: AdvertisingPayloadTooLong.self) { try AdvertisingPayload([UInt8](repeating: 0, count: 32)) }
        #expect(try AdvertisingPayload([UInt8](repeating: 0, count: 31)).bytes.count == 31)
    }
}

/// A small deterministic generator for random-input tests.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
