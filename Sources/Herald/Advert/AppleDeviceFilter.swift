/// Herald's filter for Apple devices that cannot host the Herald service (AirPods, Macs, Apple
/// TVs, watches...): a scanner that sees only Apple manufacturer data would otherwise connect to
/// every one of them to look for the service.
///
/// Herald for Android (`BLEDeviceFilter`, `BLESensorConfiguration.deviceFilterFeaturePatterns`)
/// splits Apple manufacturer data into Apple's own segments (type u8, length u8, data; type 0x01,
/// the overflow area, runs to the end) and matches case-insensitive regular expressions against
/// the hex of each segment (type and length included); one match ignores the device. Every
/// pattern Herald ships is anchored (`^`) and made of hex digits and `.`, i.e. a fixed prefix with
/// wildcard nibbles, so this filter compiles such patterns to byte masks and matches them without
/// a regex engine or an allocation per advert.
public struct AppleDeviceFilter: Sendable {
    /// Herald for Android's default `deviceFilterFeaturePatterns` (herald-for-android
    /// `BLESensorConfiguration.java`, unchanged from v1.2 to 2.2).
    public static let heraldPatterns = [
        "^10....04", "^10....14", "^0100000000000000000000000000000000",
        "^05", "^07", "^09", "^00", "^1002", "^06", "^08", "^03", "^0C", "^0D", "^0F", "^0E", "^0B",
    ]

    /// The filter with Herald's default patterns.
    public static let herald = AppleDeviceFilter(compiled: heraldPatterns.compactMap { try? Pattern($0) })

    /// A filter that ignores nothing.
    public static let none = AppleDeviceFilter(compiled: [])

    public let patterns: [Pattern]
    /// Segment types matched by a whole one-byte pattern such as `^05`: one bit test per segment.
    private let firstByteSet: (UInt64, UInt64, UInt64, UInt64)
    /// The other patterns, tried in order.
    private let longPatterns: [Pattern]

    public init(patterns: [String]) throws(PatternError) {
        var compiled = [Pattern]()
        for text in patterns { compiled.append(try Pattern(text)) }
        self.init(compiled: compiled)
    }

    private init(compiled: [Pattern]) {
        patterns = compiled
        var set: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var long = [Pattern]()
        for pattern in compiled {
            if pattern.masks == [0xFF] {
                let b = pattern.values[0]
                let bit = UInt64(1) << UInt64(b & 63)
                switch b >> 6 {
                case 0: set.0 |= bit
                case 1: set.1 |= bit
                case 2: set.2 |= bit
                default: set.3 |= bit
                }
            } else {
                long.append(pattern)
            }
        }
        firstByteSet = set
        longPatterns = long
    }

    /// Whether Apple manufacturer data (after the company ID) marks a device to ignore. Mirrors
    /// Herald's segment walk, including its failure: data ending in a lone byte that is not the
    /// overflow type makes Herald's parser throw, and Herald then ignores nothing.
    public func matches(appleManufacturerData data: ArraySlice<UInt8>) -> Bool {
        var matched = false
        var position = data.startIndex
        while position < data.endIndex {
            let type = data[position]
            let segmentEnd: Int
            if type == 0x01 {
                segmentEnd = data.endIndex
            } else {
                guard position + 1 < data.endIndex else { return false }
                let declared = Int(data[position + 1])
                segmentEnd = position + 2 + min(declared, data.endIndex - position - 2)
            }
            if !matched { matched = matches(segment: data[position..<segmentEnd]) }
            position = segmentEnd
        }
        return matched
    }

    /// Whether one Apple segment (type, length, data) matches a pattern.
    public func matches(segment: ArraySlice<UInt8>) -> Bool {
        guard let first = segment.first else { return false }
        let bit = UInt64(1) << UInt64(first & 63)
        let word: UInt64
        switch first >> 6 {
        case 0: word = firstByteSet.0
        case 1: word = firstByteSet.1
        case 2: word = firstByteSet.2
        default: word = firstByteSet.3
        }
        if word & bit != 0 { return true }
        for pattern in longPatterns where pattern.matches(segment) { return true }
        return false
    }

    /// One anchored pattern: hex digits and `.` (one nibble each) after `^`, case-insensitive.
    public struct Pattern: Hashable, Sendable, CustomStringConvertible {
        public let text: String
        /// Per byte: the nibbles that must match (0xF0, 0x0F, 0xFF or 0x00) and their values.
        let masks: [UInt8]
        let values: [UInt8]

        public init(_ text: String) throws(PatternError) {
            var chars = Substring(text).utf8.makeIterator()
            guard chars.next() == UInt8(ascii: "^") else {
                throw PatternError(pattern: text, problem: "must start with ^ (only patterns anchored at the segment start are supported)")
            }
            var masks = [UInt8](), values = [UInt8]()
            var nibble = 0
            while let c = chars.next() {
                let value: UInt8?
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value = c - UInt8(ascii: "A") + 10
                case UInt8(ascii: "."): value = nil
                default:
                    throw PatternError(pattern: text, problem: "may hold only hex digits and . after ^")
                }
                if nibble % 2 == 0 {
                    masks.append(value == nil ? 0 : 0xF0)
                    values.append((value ?? 0) << 4)
                } else if let value {
                    masks[masks.count - 1] |= 0x0F
                    values[values.count - 1] |= value
                }
                nibble += 1
            }
            guard nibble > 0 else { throw PatternError(pattern: text, problem: "is empty; it would ignore every Apple device") }
            self.text = text
            self.masks = masks
            self.values = values
        }

        /// A regex over hex needs as many hex digits as the pattern has characters, so a segment
        /// shorter than the pattern never matches, even on wildcard nibbles.
        public func matches(_ segment: ArraySlice<UInt8>) -> Bool {
            guard segment.count >= masks.count else { return false }
            var i = segment.startIndex
            for k in 0..<masks.count {
                if segment[i] & masks[k] != values[k] { return false }
                i += 1
            }
            return true
        }

        public var description: String { text }
    }

    public struct PatternError: Error, Hashable, Sendable, CustomStringConvertible {
        public var pattern: String
        public var problem: String
        public var description: String { "device filter pattern \"\(pattern)\" \(problem)" }
    }
}
