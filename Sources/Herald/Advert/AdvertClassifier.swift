import BLEHost

/// Classifies advertising data (one report's AD structures) in one pass, without allocating or
/// reference counting: this runs for every report the controller delivers.
///
/// The order follows Herald for Android's receiver (`ConcreteBLEReceiver.didDiscover`): the Herald
/// service wins (with Apple data it is a foreground iPhone, without it an Android phone); then the
/// advert-only protocols that are enabled; then Apple manufacturer data, filtered by Herald's
/// device patterns; everything else is ignored. Malformed structures (a length running past the
/// end) end the walk; what came before still counts, as in Herald's own parser.
///
/// It walks the AD structures itself, with the rules of ``AdvertisingData``, rather than through
/// that type's accessors: one pass over a raw buffer finds every field it needs, where the
/// accessors would walk the data once per field with a reference-counted slice per structure.
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
    private let gaenShort: UInt16?
    private let protocolShort: UInt16?
    private let legacyHerald: UUID128?
    private let openTrace: UUID128?
    private let protocolLong: UUID128?

    /// A 128-bit UUID as the two little-endian halves of its wire bytes: compared without
    /// building a ``BluetoothUUID``.
    private struct UUID128: Equatable, Sendable {
        var first: UInt64
        var second: UInt64

        init(_ uuid: BluetoothUUID) {
            first = uuid.low
            second = uuid.high
        }

        init(_ p: UnsafeBufferPointer<UInt8>, at k: Int) {
            first = AdvertClassifier.le64(p, k)
            second = AdvertClassifier.le64(p, k + 8)
        }
    }

    /// Fails only for a device filter pattern this filter cannot compile.
    public init(_ configuration: Configuration = Configuration()) throws(AppleDeviceFilter.PatternError) {
        self.configuration = configuration
        appleFilter = configuration.appleFilterPatterns == AppleDeviceFilter.heraldPatterns
            ? .herald : try AppleDeviceFilter(patterns: configuration.appleFilterPatterns)
        heraldShort = HeraldUUIDs.service.shortValue ?? 0xFCF6
        gaenShort = configuration.gaen ? GAENAdvert.serviceUUID : nil
        legacyHerald = configuration.legacyHeraldService ? UUID128(HeraldUUIDs.legacyService) : nil
        openTrace = configuration.openTrace ? UUID128(InteropUUIDs.openTraceService) : nil
        protocolShort = configuration.advertProtocolService?.shortValue
        protocolLong = protocolShort == nil ? configuration.advertProtocolService.map(UUID128.init) : nil
    }

    public func classify(_ data: [UInt8]) -> AdvertClass { classify(data[...]) }

    public func classify(_ data: AdvertisingData) -> AdvertClass { classify(data.bytes) }

    public func classify(_ data: ArraySlice<UInt8>) -> AdvertClass {
        let scan = data.withUnsafeBufferPointer { self.scan($0) }
        return advertClass(scan, data)
    }

    /// The class and the TX power level (AD type 0x0A) the data announces, from the same one
    /// pass over its AD structures.
    public func classifyReport(_ data: ArraySlice<UInt8>) -> (advertClass: AdvertClass, txPower: Int?) {
        let scan = data.withUnsafeBufferPointer { self.scan($0) }
        return (advertClass(scan, data), scan.txPower.map(Int.init))
    }

    @inline(__always)
    private func advertClass(_ scan: Scan, _ data: ArraySlice<UInt8>) -> AdvertClass {
        if scan.herald { return .herald(pseudoAddress: scan.pseudo, apple: scan.apple) }
        if let gaen = scan.gaen { return .gaen(gaen) }
        if scan.openTrace { return .openTrace }
        if let range = scan.protocolData {
            let base = data.startIndex
            return .advertProtocol(payload: data[(base + range.lowerBound)..<(base + range.upperBound)])
        }
        if scan.apple { return scan.appleFiltered ? .ignored(.appleAccessory) : .apple }
        return .ignored(.unrelated)
    }

    /// What one pass over the AD structures found; offsets are relative to the data's start.
    private struct Scan {
        var herald = false
        var openTrace = false
        var apple = false
        var appleFiltered = false
        var pseudo: PseudoDeviceAddress? = nil
        var gaen: GAENAdvert? = nil
        var protocolData: Range<Int>? = nil
        var txPower: Int8? = nil
    }

    private func scan(_ p: UnsafeBufferPointer<UInt8>) -> Scan {
        var found = Scan()
        let end = p.count
        var i = 0
        while i < end {
            let length = Int(p[i])
            // A zero length ends the significant part (the rest is padding); a length past the end
            // is malformed and ends the walk.
            guard length > 0, i + 1 + length <= end else { break }
            let type = p[i + 1]
            let body = i + 2
            let bodyEnd = i + 1 + length
            i = bodyEnd

            switch type {
            case 0x02, 0x03:  // incomplete / complete list of 16-bit service UUIDs
                var k = body
                while k + 2 <= bodyEnd {
                    if Self.le16(p, k) == heraldShort { found.herald = true }
                    k += 2
                }
            case 0x06, 0x07:  // incomplete / complete list of 128-bit service UUIDs
                guard legacyHerald != nil || openTrace != nil else { break }
                var k = body
                while k + 16 <= bodyEnd {
                    let uuid = UUID128(p, at: k)
                    if uuid == legacyHerald { found.herald = true }
                    if uuid == openTrace { found.openTrace = true }
                    k += 16
                }
            case 0x16:  // service data, 16-bit UUID
                guard bodyEnd - body >= 2 else { break }
                let uuid = Self.le16(p, body)
                if uuid == gaenShort, bodyEnd - body == 2 + GAENAdvert.serviceDataSize {
                    found.gaen = GAENAdvert(
                        rpiHigh: Self.be64(p, body + 2), rpiLow: Self.be64(p, body + 10), metadata: UInt32(truncatingIfNeeded: Self.be64(p, body + 14)))
                }
                if uuid == protocolShort { found.protocolData = (body + 2)..<bodyEnd }
            case 0x0A:  // TX power level
                if bodyEnd > body { found.txPower = Int8(bitPattern: p[body]) }
            case 0x21:  // service data, 128-bit UUID
                guard let protocolLong, bodyEnd - body >= 16, UUID128(p, at: body) == protocolLong else { break }
                found.protocolData = (body + 16)..<bodyEnd
            case 0xFF:  // manufacturer specific data
                guard bodyEnd - body >= 2 else { break }
                let company = Self.le16(p, body)
                if company == 0x004C {
                    found.apple = true
                    if !found.appleFiltered {
                        found.appleFiltered = appleFilter.matches(appleManufacturerData: UnsafeBufferPointer(rebasing: p[(body + 2)..<bodyEnd]))
                    }
                } else if found.pseudo == nil, company == 0x05F1 || company == 0xFFFA, bodyEnd - body >= 2 + PseudoDeviceAddress.size {
                    found.pseudo = PseudoDeviceAddress(rawValue: Self.le64(p, body) >> 16)
                }
            default:
                break
            }
        }
        return found
    }

    @inline(__always)
    fileprivate static func le16(_ p: UnsafeBufferPointer<UInt8>, _ k: Int) -> UInt16 {
        UInt16(p[k]) | UInt16(p[k + 1]) << 8
    }

    /// Eight bytes little-endian from offset `k` (the caller checked they are there).
    @inline(__always)
    fileprivate static func le64(_ p: UnsafeBufferPointer<UInt8>, _ k: Int) -> UInt64 {
        var value: UInt64 = 0
        for j in 0..<8 { value |= UInt64(p[k + j]) << (8 * UInt64(j)) }
        return value
    }

    /// Eight bytes big-endian from offset `k`.
    @inline(__always)
    fileprivate static func be64(_ p: UnsafeBufferPointer<UInt8>, _ k: Int) -> UInt64 {
        var value: UInt64 = 0
        for j in 0..<8 { value = value << 8 | UInt64(p[k + j]) }
        return value
    }
}
