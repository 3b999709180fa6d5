import BLEHost

/// Classifies advertising data (one report's AD structures) in one pass, without allocating: this
/// runs for every report the controller delivers.
///
/// The order follows Herald for Android's receiver (`ConcreteBLEReceiver.didDiscover`): the Herald
/// service wins (with Apple data it is a foreground iPhone, without it an Android phone); then the
/// advert-only protocols that are enabled; then Apple manufacturer data, filtered by Herald's
/// device patterns; everything else is ignored. Malformed structures (a length running past the
/// end) end the walk; what came before still counts, as in Herald's own parser.
public struct AdvertClassifier: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Detect the pre-2.1 128-bit Herald service too (Herald's default).
        public var legacyHeraldService: Bool
        /// Record Exposure Notification adverts (service data 0xFD6F).
        public var gaen: Bool
        /// Report adverts with the OpenTrace service.
        public var openTrace: Bool
        /// A configured advert-based protocol: its service data (under this UUID) is the payload.
        public var advertProtocolService: BluetoothUUID?
        /// Herald's device filter patterns for Apple manufacturer data.
        public var appleFilterPatterns: [String]

        public init(
            legacyHeraldService: Bool = true, gaen: Bool = true, openTrace: Bool = false, advertProtocolService: BluetoothUUID? = nil,
            appleFilterPatterns: [String] = AppleDeviceFilter.heraldPatterns
        ) {
            self.legacyHeraldService = legacyHeraldService
            self.gaen = gaen
            self.openTrace = openTrace
            self.advertProtocolService = advertProtocolService
            self.appleFilterPatterns = appleFilterPatterns
        }
    }

    public let configuration: Configuration
    private let appleFilter: AppleDeviceFilter
    private let heraldShort: UInt16
    private let legacyHerald: BluetoothUUID?
    private let openTrace: BluetoothUUID?
    private let gaenShort: UInt16?
    private let advertProtocolShort: UInt16?
    private let advertProtocol128: BluetoothUUID?

    /// Fails only for a device filter pattern this filter cannot compile.
    public init(_ configuration: Configuration = Configuration()) throws(AppleDeviceFilter.PatternError) {
        self.configuration = configuration
        appleFilter = configuration.appleFilterPatterns == AppleDeviceFilter.heraldPatterns
            ? .herald : try AppleDeviceFilter(patterns: configuration.appleFilterPatterns)
        heraldShort = HeraldUUIDs.service.shortValue ?? 0xFCF6
        legacyHerald = configuration.legacyHeraldService ? HeraldUUIDs.legacyService : nil
        openTrace = configuration.openTrace ? InteropUUIDs.openTraceService : nil
        gaenShort = configuration.gaen ? GAENAdvert.serviceUUID : nil
        advertProtocolShort = configuration.advertProtocolService?.shortValue
        advertProtocol128 = advertProtocolShort == nil ? configuration.advertProtocolService : nil
    }

    /// AD types this classifier reads.
    private enum ADType {
        static let incomplete16 = UInt8(0x02), complete16 = UInt8(0x03)
        static let incomplete128 = UInt8(0x06), complete128 = UInt8(0x07)
        static let serviceData16 = UInt8(0x16), serviceData128 = UInt8(0x21)
        static let manufacturer = UInt8(0xFF)
    }

    public func classify(_ data: ArraySlice<UInt8>) -> AdvertClass {
        var herald = false
        var openTraceListed = false
        var apple = false
        var appleFiltered = false
        var pseudo: PseudoDeviceAddress? = nil
        var gaenData: ArraySlice<UInt8>? = nil
        var protocolData: ArraySlice<UInt8>? = nil

        var i = data.startIndex
        let end = data.endIndex
        while i < end {
            let length = Int(data[i])
            // A zero length ends the significant part (the rest is padding); a length past the end
            // is malformed and ends the walk.
            guard length > 0, i + 1 + length <= end else { break }
            let type = data[i + 1]
            let body = i + 2
            let bodyEnd = i + 1 + length
            i = bodyEnd

            switch type {
            case ADType.incomplete16, ADType.complete16:
                var k = body
                while k + 2 <= bodyEnd {
                    if UInt16(data[k]) | UInt16(data[k + 1]) << 8 == heraldShort { herald = true }
                    k += 2
                }
            case ADType.incomplete128, ADType.complete128:
                var k = body
                while k + 16 <= bodyEnd {
                    let uuid = Self.uuid128(data, at: k)
                    if uuid == legacyHerald { herald = true }
                    if uuid == openTrace { openTraceListed = true }
                    k += 16
                }
            case ADType.serviceData16:
                guard bodyEnd - body >= 2 else { break }
                let uuid = UInt16(data[body]) | UInt16(data[body + 1]) << 8
                if uuid == gaenShort { gaenData = data[(body + 2)..<bodyEnd] }
                if uuid == advertProtocolShort { protocolData = data[(body + 2)..<bodyEnd] }
            case ADType.serviceData128:
                guard advertProtocol128 != nil, bodyEnd - body >= 16 else { break }
                if Self.uuid128(data, at: body) == advertProtocol128 { protocolData = data[(body + 16)..<bodyEnd] }
            case ADType.manufacturer:
                guard bodyEnd - body >= 2 else { break }
                let company = UInt16(data[body]) | UInt16(data[body + 1]) << 8
                let rest = data[(body + 2)..<bodyEnd]
                if company == HeraldUUIDs.appleManufacturerID {
                    apple = true
                    if !appleFiltered { appleFiltered = appleFilter.matches(appleManufacturerData: rest) }
                } else if pseudo == nil {
                    pseudo = PseudoDeviceAddress(companyID: company, data: rest)
                }
            default:
                break
            }
        }

        if herald { return .herald(pseudoAddress: pseudo, apple: apple) }
        // The length is checked first so a malformed advert costs no error value.
        if let gaenData, gaenData.count == GAENAdvert.serviceDataSize, let advert = try? GAENAdvert(serviceData: gaenData) {
            return .gaen(advert)
        }
        if openTraceListed { return .openTrace }
        if let protocolData { return .advertProtocol(payload: protocolData) }
        if apple { return appleFiltered ? .ignored(.appleAccessory) : .apple }
        return .ignored(.unrelated)
    }

    public func classify(_ data: [UInt8]) -> AdvertClass { classify(data[...]) }

    /// A 128-bit UUID from its 16 wire bytes (least significant first).
    @inline(__always)
    private static func uuid128(_ data: ArraySlice<UInt8>, at k: Int) -> BluetoothUUID {
        var low: UInt64 = 0, high: UInt64 = 0
        for j in 0..<8 { low |= UInt64(data[k + j]) << (8 * UInt64(j)) }
        for j in 0..<8 { high |= UInt64(data[k + 8 + j]) << (8 * UInt64(j)) }
        return BluetoothUUID(high: high, low: low)
    }
}
