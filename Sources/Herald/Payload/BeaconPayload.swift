import BLEHost

/// Herald venue beacon payload V1 (Herald `specs/payload-beacon.md`): what the node serves on
/// its payload characteristic and what phones keep in their venue diary.
///
/// `0x30`, country u16, state u16, venue code u32, then extended data. Every Herald
/// implementation writes the integers little-endian (the spec text says big-endian; the iOS test
/// vector and the C++ code are little-endian), so this does too.
public struct BeaconPayload: Hashable, Sendable {
    /// The version byte this node writes.
    public static let versionV1: UInt8 = 0x30
    /// The version bytes reserved for venue beacons; iOS's venue diary accepts all of them.
    public static let versions: ClosedRange<UInt8> = 0x30...0x37
    /// Version, country, state, code.
    public static let headerSize = 9
    /// "Fixed and variable length payloads up to 510 bytes" (Herald docs).
    public static let maximumSize = 510

    public var version: UInt8
    /// ISO-3166-1 numeric country code (826 = United Kingdom).
    public var country: UInt16
    /// State or authority code within the country (0 = national).
    public var state: UInt16
    /// Venue code, unique within (country, state).
    public var code: UInt32
    public var extendedData: ExtendedData

    public init(version: UInt8 = versionV1, country: UInt16, state: UInt16, code: UInt32, extendedData: ExtendedData = ExtendedData()) {
        self.version = version
        self.country = country
        self.state = state
        self.code = code
        self.extendedData = extendedData
    }

    /// A venue with its text sections in code order; nil or empty texts are left out, as Herald
    /// omits empty sections.
    public init(country: UInt16, state: UInt16, code: UInt32, name: String?, location: String? = nil, area: String? = nil, url: String? = nil) {
        var sections = [ExtendedDataSection]()
        for (sectionCode, text) in [(ExtendedDataCode.premisesName, name), (.location, location), (.area, area), (.url, url)] {
            if let text, !text.isEmpty { sections.append(ExtendedDataSection(code: sectionCode, text: text)) }
        }
        self.init(country: country, state: state, code: code, extendedData: ExtendedData(sections: sections))
    }

    /// The premises name (section 0x10), the only section iOS's venue diary reads.
    public var name: String? { extendedData.text(.premisesName) }

    public var encodedSize: Int { Self.headerSize + extendedData.encodedSize }

    /// The payload bytes; a field that does not fit is an error naming it.
    public func encoded() throws(PayloadSizeError) -> [UInt8] {
        let size = encodedSize
        if size > Self.maximumSize {
            let longest = extendedData.sections.max { $0.data.count < $1.data.count }
            throw PayloadSizeError(
                field: longest?.code.fieldName ?? "extended data", problem: .payloadTooLarge, size: size, limit: Self.maximumSize)
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(size)
        bytes.append(version)
        bytes.appendLE16(country)
        bytes.appendLE16(state)
        bytes.appendLE32(code)
        try extendedData.append(to: &bytes)
        return bytes
    }

    /// Parses a venue beacon payload. The header must be complete and the version in 0x30–0x37
    /// (what iOS's venue diary requires); extended data is parsed with Herald's lenient rules.
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var reader = ByteReader(bytes)
        let version = try reader.readU8("beacon version")
        guard Self.versions.contains(version) else {
            throw DecodeError(.invalidValue, field: "beacon version", detail: "0x\(Hex.encode([version])) is not a venue beacon (0x30-0x37)")
        }
        let country = try reader.readLE16("beacon country")
        let state = try reader.readLE16("beacon state")
        let code = try reader.readLE32("beacon venue code")
        self.init(version: version, country: country, state: state, code: code, extendedData: ExtendedData(parsing: reader.readRest()))
    }

    public init(decoding bytes: [UInt8]) throws(DecodeError) { try self.init(decoding: bytes[...]) }
}
