import BLEHost

/// The code of an extended data section (Herald `specs/payload-extended.md`). Open: codes this
/// node does not know survive a parse and an encode.
public struct ExtendedDataCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Premises name (text), the name a venue diary shows.
    public static let premisesName = ExtendedDataCode(rawValue: 0x10)
    /// Location within the premises (text), e.g. "Window seating".
    public static let location = ExtendedDataCode(rawValue: 0x11)
    /// Area disambiguation (text), e.g. the town.
    public static let area = ExtendedDataCode(rawValue: 0x12)
    /// https URL of the venue (text).
    public static let url = ExtendedDataCode(rawValue: 0x13)

    /// The `[venue]` config key for the sections the node advertises, so errors name what the
    /// operator wrote; `section 0xNN` otherwise.
    public var fieldName: String {
        switch self {
        case .premisesName: return "name"
        case .location: return "location"
        case .area: return "area"
        case .url: return "url"
        default: return "section 0x" + Hex.encode([rawValue])
        }
    }

    public var description: String { fieldName }
}

/// One extended data section: code, one length byte, data.
public struct ExtendedDataSection: Hashable, Sendable {
    public var code: ExtendedDataCode
    public var data: [UInt8]

    public init(code: ExtendedDataCode, data: [UInt8]) {
        self.code = code
        self.data = data
    }

    /// A text section: UTF-8 bytes, the length in bytes (what Herald for Android and C++ write;
    /// Herald for iOS writes the character count, which differs for non-ASCII text).
    public init(code: ExtendedDataCode, text: String) {
        self.init(code: code, data: Array(text.utf8))
    }

    /// The data as UTF-8 text; invalid sequences become U+FFFD rather than failing.
    public var text: String { String(decoding: data, as: UTF8.self) }

    /// Bytes on the wire: code, length, data.
    public var encodedSize: Int { 2 + data.count }
}

/// Extended data: the sections that follow a payload's fixed header.
public struct ExtendedData: Hashable, Sendable {
    public var sections: [ExtendedDataSection]

    /// A section's data is at most 255 bytes: its length is one byte.
    public static let maximumSectionDataBytes = 255

    public init(sections: [ExtendedDataSection] = []) { self.sections = sections }

    /// Parses sections with Herald's own rules (herald-for-android `ConcreteExtendedDataV1`),
    /// which never fail: parsing stops when two or fewer bytes remain (a section needs its code,
    /// its length and at least one more byte to be read), and a length longer than what is left
    /// is clamped to what is left.
    public init(parsing bytes: ArraySlice<UInt8>) {
        var sections = [ExtendedDataSection]()
        var position = bytes.startIndex
        while bytes.endIndex - position > 2 {
            let code = bytes[position]
            let declared = Int(bytes[position + 1])
            position += 2
            let length = min(declared, bytes.endIndex - position)
            sections.append(ExtendedDataSection(code: ExtendedDataCode(rawValue: code), data: Array(bytes[position..<position + length])))
            position += length
        }
        self.sections = sections
    }

    public var isEmpty: Bool { sections.isEmpty }

    /// The first section with this code.
    public func section(_ code: ExtendedDataCode) -> ExtendedDataSection? {
        sections.first { $0.code == code }
    }

    /// The first section with this code, as text.
    public func text(_ code: ExtendedDataCode) -> String? { section(code)?.text }

    /// Bytes on the wire.
    public var encodedSize: Int { sections.reduce(0) { $0 + $1.encodedSize } }

    /// Appends every section; a section whose data does not fit its length byte is an error
    /// naming the section.
    public func append(to bytes: inout [UInt8]) throws(PayloadSizeError) {
        for section in sections where section.data.count > Self.maximumSectionDataBytes {
            throw PayloadSizeError(
                field: section.code.fieldName, problem: .sectionTooLong, size: section.data.count,
                limit: Self.maximumSectionDataBytes)
        }
        bytes.reserveCapacity(bytes.count + encodedSize)
        for section in sections {
            bytes.append(section.code.rawValue)
            bytes.append(UInt8(section.data.count))
            bytes.append(contentsOf: section.data)
        }
    }
}

/// A payload that cannot be built because a field is too long. Names the field (the `[venue]`
/// config key where there is one) so the operator knows what to shorten.
public struct PayloadSizeError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Problem: Hashable, Sendable {
        /// One section's data is longer than its one-byte length allows (`size` is its data).
        case sectionTooLong
        /// The whole payload is longer than a Herald payload may be (`size` is the payload).
        case payloadTooLarge
    }

    /// The field to shorten: for `payloadTooLarge`, the longest section.
    public var field: String
    public var problem: Problem
    public var size: Int
    public var limit: Int

    public init(field: String, problem: Problem, size: Int, limit: Int) {
        self.field = field
        self.problem = problem
        self.size = size
        self.limit = limit
    }

    public var description: String {
        switch problem {
        case .sectionTooLong:
            return "\(field) is \(size) bytes of UTF-8; an extended data section holds at most \(limit)"
        case .payloadTooLarge:
            return "the payload would be \(size) bytes; a Herald payload is at most \(limit): shorten \(field)"
        }
    }
}
