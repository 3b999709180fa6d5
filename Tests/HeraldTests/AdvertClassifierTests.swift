import BLEHost
import Testing

@testable import Herald

/// Realistic advertising data, written as AD structures (length, type, data).
enum Adverts {
    static let flags: [UInt8] = [0x02, 0x01, 0x1A]
    static let heraldList: [UInt8] = [0x03, 0x03, 0xF6, 0xFC]
    static let pseudo = PseudoDeviceAddress(int64: 0x1122_3344_5566_7788)
    static func manufacturer(_ company: UInt16, _ data: [UInt8]) -> [UInt8] {
        [UInt8(data.count + 3), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)] + data
    }
    static func list128(_ uuid: BluetoothUUID) -> [UInt8] { [0x11, 0x07] + uuid.littleEndianBytes128 }

    /// Herald Android 2.2: flags, FCF6, pseudo device address under 0x05F1.
    static let android = flags + heraldList + manufacturer(0x05F1, pseudo.bytes)
    /// Herald Android 2.1 (pseudo address off).
    static let androidWithoutPseudo = flags + heraldList
    /// Herald Android before 2.1: the legacy 128-bit service and manufacturer 0xFFFA.
    static let androidLegacy = flags + list128(HeraldUUIDs.legacyService) + manufacturer(0xFFFA, pseudo.bytes)
    /// An iPhone in the foreground: the Herald service in the 16-bit list, Apple data in the same report.
    static let iPhoneForeground = flags + heraldList + manufacturer(0x004C, [0x10, 0x05, 0x01, 0x18, 0x1C, 0x2B, 0x3A])
    /// An iPhone in the background: only Apple data, the service hidden in the overflow area (one bit set).
    static let iPhoneBackground = flags + manufacturer(0x004C, [0x01] + [UInt8](repeating: 0, count: 8) + [0x80] + [UInt8](repeating: 0, count: 7))
    /// An iPhone's "nearby info" message.
    static let iPhoneNearby = flags + manufacturer(0x004C, [0x10, 0x05, 0x01, 0x18, 0x1C, 0x2B, 0x3A])
    /// AirPods (proximity pairing, type 0x07).
    static let airPods = manufacturer(0x004C, [0x07, 0x19, 0x01, 0x0E, 0x20, 0x2B, 0x77, 0x8F, 0x01, 0x00, 0x04] + [UInt8](repeating: 0x5A, count: 16))
    /// A Mac: nearby info whose second data byte is 0x04 (pattern ^10....04).
    static let mac = flags + manufacturer(0x004C, [0x10, 0x06, 0x0C, 0x04, 0x4F, 0xDE, 0x4D, 0xF7])
    /// Handoff then nearby info: one filtered segment is enough.
    static let handoff = flags + manufacturer(0x004C, [0x0C, 0x0E, 0x00] + [UInt8](repeating: 0x33, count: 13) + [0x10, 0x05, 0x01, 0x18, 0x1C, 0x2B, 0x3A])
    /// An empty overflow area: no services at all.
    static let emptyOverflow = flags + manufacturer(0x004C, [0x01] + [UInt8](repeating: 0, count: 16))
    /// Exposure Notification: flags, FD6F list, service data RPI + AEM.
    static let rpi = Hex.decode("8be6cd371c5c891604bfbe49df845096")!
    static let aem = Hex.decode("72033874")!
    static let gaen: [UInt8] = flags + [0x03, 0x03, 0x6F, 0xFD, 0x17, 0x16, 0x6F, 0xFD] + rpi + aem
    /// Noise: a Microsoft CDP beacon, a Tile, an Eddystone URL.
    static let microsoft = manufacturer(0x0006, [0x01, 0x09, 0x20, 0x02, 0x9F, 0x8E, 0xA3, 0x2D, 0x44, 0x1A, 0x3C, 0x55])
    static let tile: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xED, 0xFE]
    static let eddystone: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0x0C, 0x16, 0xAA, 0xFE, 0x10, 0xEB, 0x03, 0x67, 0x6F, 0x6F, 0x2E, 0x67, 0x6C, 0x2F]
    static let openTrace = flags + list128(InteropUUIDs.openTraceService) + manufacturer(0x03FF, [1, 2, 3])
}

@Suite struct AdvertClassifierTests {
    let classifier: AdvertClassifier

    init() throws { classifier = try AdvertClassifier() }

    @Test func heraldAndroidWithPseudoAddress() {
        #expect(classifier.classify(Adverts.android) == .herald(pseudoAddress: Adverts.pseudo, apple: false))
    }

    /// The TX power level comes from the same pass (Herald logs it as a calibration).
    @Test func txPowerLevelFromTheSamePass() {
        let withPower = Adverts.heraldList + [0x02, 0x0A, 0xF4] + Adverts.flags
        #expect(classifier.classifyReport(withPower[...]).txPower == -12)
        #expect(classifier.classifyReport(withPower[...]).advertClass == .herald(pseudoAddress: nil, apple: false))
        #expect(classifier.classifyReport(Adverts.android[...]).txPower == nil)
        #expect(classifier.classifyReport([0x01, 0x0A][...]).txPower == nil)  // an empty TX power structure
    }

    @Test func heraldAndroidWithoutPseudoAddress() {
        #expect(classifier.classify(Adverts.androidWithoutPseudo) == .herald(pseudoAddress: nil, apple: false))
    }

    @Test func legacyServiceAndManufacturer() throws {
        #expect(classifier.classify(Adverts.androidLegacy) == .herald(pseudoAddress: Adverts.pseudo, apple: false))
        let strict = try AdvertClassifier(.init(legacyHeraldService: false))
        #expect(strict.classify(Adverts.androidLegacy) == .ignored(.unrelated))
    }

    @Test func serviceInAnIncompleteListOrAmongOthers() {
        let advert = Adverts.flags + [0x07, 0x02, 0x0F, 0x18, 0xF6, 0xFC, 0x0A, 0x18]
        #expect(classifier.classify(advert) == .herald(pseudoAddress: nil, apple: false))
    }

    @Test func iPhoneForegroundAndBackground() {
        #expect(classifier.classify(Adverts.iPhoneForeground) == .herald(pseudoAddress: nil, apple: true))
        #expect(classifier.classify(Adverts.iPhoneBackground) == .apple)
        #expect(classifier.classify(Adverts.iPhoneNearby) == .apple)
    }

    @Test func appleAccessoriesAreFiltered() throws {
        for advert in [Adverts.airPods, Adverts.mac, Adverts.handoff, Adverts.emptyOverflow] {
            #expect(classifier.classify(advert) == .ignored(.appleAccessory))
        }
        let unfiltered = try AdvertClassifier(.init(appleFilterPatterns: []))
        #expect(unfiltered.classify(Adverts.airPods) == .apple)
    }

    @Test func gaenRecordsTheRPI() throws {
        guard case .gaen(let advert) = classifier.classify(Adverts.gaen) else {
            Issue.record("not classified as GAEN")
            return
        }
        #expect(advert.rpi == Adverts.rpi)
        #expect(advert.aem == Adverts.aem)
        #expect(try AdvertClassifier(.init(gaen: false)).classify(Adverts.gaen) == .ignored(.unrelated))
        // Service data of the wrong length is not an EN advert.
        let short = Adverts.flags + [0x13, 0x16, 0x6F, 0xFD] + Adverts.rpi
        #expect(classifier.classify(short) == .ignored(.unrelated))
    }

    @Test func openTraceOnlyWhenEnabled() throws {
        #expect(classifier.classify(Adverts.openTrace) == .ignored(.unrelated))
        #expect(try AdvertClassifier(.init(openTrace: true)).classify(Adverts.openTrace) == .openTrace)
    }

    @Test func configuredAdvertProtocol16And128Bit() throws {
        let short = try AdvertClassifier(.init(gaen: false, advertProtocolService: BluetoothUUID(UInt16(0xFD6F))))
        #expect(short.classify(Adverts.gaen) == .advertProtocol(payload: (Adverts.rpi + Adverts.aem)[...]))

        let uuid = BluetoothUUID("01234567-89ab-cdef-0123-456789abcdef")!
        let advert = Adverts.flags + [0x15, 0x21] + uuid.littleEndianBytes128 + [0xDE, 0xAD, 0xBE, 0xEF]
        let long = try AdvertClassifier(.init(advertProtocolService: uuid))
        #expect(long.classify(advert) == .advertProtocol(payload: [0xDE, 0xAD, 0xBE, 0xEF][...]))
        #expect(classifier.classify(advert) == .ignored(.unrelated))
    }

    @Test func noiseIsIgnored() {
        for advert in [Adverts.microsoft, Adverts.tile, Adverts.eddystone, [], [0x00], Adverts.flags] {
            #expect(classifier.classify(advert) == .ignored(.unrelated))
        }
    }

    @Test func malformedStructuresEndTheWalk() {
        // The Herald list claims 5 bytes but only 3 remain.
        #expect(classifier.classify(Adverts.flags + [0x05, 0x03, 0xF6, 0xFC]) == .ignored(.unrelated))
        // A good structure before a broken one still counts.
        #expect(classifier.classify(Adverts.heraldList + [0x09, 0xFF, 0xF1]) == .herald(pseudoAddress: nil, apple: false))
        // Zero-length padding after the significant part.
        #expect(classifier.classify(Adverts.android + [0, 0, 0]) == .herald(pseudoAddress: Adverts.pseudo, apple: false))
        // Odd-length 16-bit list, short manufacturer data, short pseudo address.
        #expect(classifier.classify([0x04, 0x03, 0xF6, 0xFC, 0x01]) == .herald(pseudoAddress: nil, apple: false))
        #expect(classifier.classify(Adverts.heraldList + [0x02, 0xFF, 0x4C]) == .herald(pseudoAddress: nil, apple: false))
        #expect(classifier.classify(Adverts.heraldList + Adverts.manufacturer(0x05F1, [1, 2, 3])) == .herald(pseudoAddress: nil, apple: false))
    }

    @Test func everyTruncationOfRealAdvertsIsSafe() {
        for advert in [Adverts.android, Adverts.androidLegacy, Adverts.iPhoneBackground, Adverts.gaen, Adverts.handoff] {
            for n in 0...advert.count {
                _ = classifier.classify(advert[..<n])
                _ = classifier.classify(advert[n...])
            }
        }
    }

    @Test func slicesWithOffsetIndices() {
        let report: [UInt8] = [0xEE, 0xEE] + Adverts.android + [0x99]
        #expect(classifier.classify(report[2..<(2 + Adverts.android.count)]) == .herald(pseudoAddress: Adverts.pseudo, apple: false))
    }

    @Test func badFilterPatternIsATypedError() {
        #expect(throws: AppleDeviceFilter.PatternError.self) { try AdvertClassifier(.init(appleFilterPatterns: ["10..04"])) }
    }
}

@Suite struct AppleDeviceFilterTests {
    let filter = AppleDeviceFilter.herald

    /// The cases of herald-for-android's `BLEDeviceFilterTests.testCompilePatterns`.
    @Test func heraldsOwnPatternTests() throws {
        let f = try AppleDeviceFilter(patterns: ["^10....04", "^10....14"])
        #expect(f.matches(segment: Hex.decode("10060C044FDE4DF7")![...]))
        #expect(f.matches(segment: Hex.decode("10060C144FDE4DF7")![...]))
        #expect(!f.matches(segment: Hex.decode("10060C054FDE4DF7")![...]))
        #expect(!f.matches(segment: Hex.decode("10060C154FDE4DF7")![...]))
        #expect(!f.matches(segment: Hex.decode("0010060C054FDE4D")![...]))
    }

    @Test func segmentsAreWalkedAsHeraldDoes() {
        // Nearby info (not filtered) then AirPlay target (^09).
        #expect(filter.matches(appleManufacturerData: [0x10, 0x02, 0x01, 0x18, 0x09, 0x01, 0x00][...]))
        // An overlong length is clamped: the segment is still seen.
        #expect(filter.matches(appleManufacturerData: [0x05, 0x30, 0x01][...]))
        // Overflow area (0x01) runs to the end and hides what follows.
        #expect(!filter.matches(appleManufacturerData: [0x01, 0x00, 0x80, 0x05, 0x01, 0x00][...]))
        // A lone trailing byte makes Herald's parser throw, and then nothing is filtered.
        #expect(!filter.matches(appleManufacturerData: [0x05, 0x01, 0x00, 0x0C][...]))
        #expect(!filter.matches(appleManufacturerData: [][...]))
    }

    @Test func patternsMatchWholeNibblesCaseInsensitively() throws {
        let f = try AppleDeviceFilter(patterns: ["^1.0c", "^A"])
        #expect(f.matches(segment: [0x1F, 0x0C][...]))
        #expect(!f.matches(segment: [0x1F, 0x0D][...]))
        #expect(!f.matches(segment: [0x1F][...]))  // shorter than the pattern
        #expect(f.matches(segment: [0xAB][...]))
        #expect(!f.matches(segment: [0xBA][...]))
        #expect(f.patterns.map(\.description) == ["^1.0c", "^A"])
    }

    @Test func defaultPatternsAreAllCompiled() {
        #expect(filter.patterns.count == AppleDeviceFilter.heraldPatterns.count)
        #expect(AppleDeviceFilter.none.patterns.isEmpty)
        #expect(!AppleDeviceFilter.none.matches(appleManufacturerData: [0x07, 0x01, 0x00][...]))
    }

    @Test func longPatternsSpanSeveralWords() throws {
        // 27 bytes: a wildcard run across the first two words, fixed bytes in the third and fourth.
        let f = try AppleDeviceFilter(patterns: ["^AB" + String(repeating: ".", count: 30) + "CD" + String(repeating: "0", count: 16) + "E.F1"])
        var segment = [UInt8](repeating: 0x77, count: 27)
        segment[0] = 0xAB
        segment[16] = 0xCD
        for k in 17..<25 { segment[k] = 0 }
        segment[25] = 0xE9
        segment[26] = 0xF1
        #expect(f.matches(segment: segment[...]))
        #expect(f.matches(segment: (segment + [1, 2])[...]))
        #expect(!f.matches(segment: segment.dropLast()))
        var wrong = segment
        wrong[20] = 1
        #expect(!f.matches(segment: wrong[...]))
        wrong = segment
        wrong[25] = 0xD9
        #expect(!f.matches(segment: wrong[...]))
        // The overflow-area pattern (17 bytes): all zero bits is filtered, one bit set is not.
        #expect(filter.matches(segment: ([0x01] + [UInt8](repeating: 0, count: 16))[...]))
        #expect(!filter.matches(segment: ([0x01] + [UInt8](repeating: 0, count: 15) + [0x02])[...]))
    }

    @Test func unsupportedPatternsAreRejected() {
        for bad in ["10....04", "^10(04)", "^", "^1 0", "", "^" + String(repeating: "0", count: 66)] {
            #expect(throws: AppleDeviceFilter.PatternError.self) { try AppleDeviceFilter(patterns: [bad]) }
        }
    }
}

/// The classifier walks AD structures itself for speed; these check it reads them exactly as
/// BLEHost's ``AdvertisingData`` does.
@Suite struct AdvertClassifierAgreesWithTheADParser {
    static let samples: [[UInt8]] = [
        Adverts.android, Adverts.androidWithoutPseudo, Adverts.androidLegacy, Adverts.iPhoneForeground, Adverts.iPhoneBackground,
        Adverts.iPhoneNearby, Adverts.airPods, Adverts.mac, Adverts.gaen, Adverts.microsoft, Adverts.tile, Adverts.eddystone,
        Adverts.openTrace, Adverts.android + [0, 0], Adverts.flags + [0x05, 0x03, 0xF6, 0xFC], Adverts.heraldList + [0x09, 0xFF, 0xF1],
    ]

    @Test(arguments: samples)
    func sameFieldsAsAdvertisingData(bytes: [UInt8]) throws {
        let classifier = try AdvertClassifier(.init(openTrace: true))
        let data = AdvertisingData(bytes)
        let services = data.serviceUUIDs
        let herald = services.contains(HeraldUUIDs.service) || services.contains(HeraldUUIDs.legacyService)
        let pseudo = data.manufacturerData.lazy.compactMap { PseudoDeviceAddress(companyID: $0.companyID, data: $0.data) }.first
        let apple = data.manufacturerData.contains { $0.companyID == HeraldUUIDs.appleManufacturerID }
        let gaen = data.serviceData(for: InteropUUIDs.exposureNotification).flatMap { try? GAENAdvert(serviceData: $0) }

        switch classifier.classify(data) {
        case .herald(let p, let a):
            #expect(herald && p == pseudo && a == apple)
        case .gaen(let g):
            #expect(!herald && g == gaen)
        case .openTrace:
            #expect(!herald && gaen == nil && services.contains(InteropUUIDs.openTraceService))
        case .apple, .ignored(.appleAccessory):
            #expect(!herald && gaen == nil && apple)
        case .ignored(.unrelated):
            #expect(!herald && gaen == nil && !apple && !services.contains(InteropUUIDs.openTraceService))
        case .advertProtocol:
            Issue.record("no advert protocol is configured")
        }
    }

    @Test func sightingFromAnHCIReport() throws {
        let classifier = try AdvertClassifier()
        let address = BluetoothAddress("5A:11:22:33:44:55")!
        let report = LEAdvertisingReport(eventType: .connectableUndirected, addressType: .random, address: address, data: Adverts.android[...], rawRSSI: -67)
        #expect(AdvertSighting(report: report, classifier: classifier)
            == AdvertSighting(address: address, addressType: .random, connectable: true, rssi: -67, advertClass: .herald(pseudoAddress: Adverts.pseudo, apple: false)))
        let response = LEAdvertisingReport(eventType: .scanResponse, addressType: .random, address: address, data: [][...], rawRSSI: 127)
        let sighting = AdvertSighting(report: response, classifier: classifier)
        #expect(sighting.connectable == nil && sighting.rssi == nil && sighting.advertClass == .ignored(.unrelated))
        let gaen = LEAdvertisingReport(eventType: .nonConnectableUndirected, addressType: .random, address: address, data: Adverts.gaen[...], rawRSSI: -80)
        #expect(AdvertSighting(report: gaen, classifier: classifier).connectable == false)
    }
}
