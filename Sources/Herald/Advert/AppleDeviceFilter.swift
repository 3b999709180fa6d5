/// Herald's filter for Apple devices that cannot host the Herald service (AirPods, Macs, Apple
/// TVs, watches...): a scanner that sees only Apple manufacturer data would otherwise connect to
/// every one of them to look for the service.
///
/// Herald for Android (`BLEDeviceFilter`, `BLESensorConfiguration.deviceFilterFeaturePatterns`)
/// splits Apple manufacturer data into Apple's own segments (type u8, length u8, data; type 0x01,
/// the overflow area, runs to the end) and matches case-insensitive regular expressions against
/// the hex of each segment (type and length included); one match ignores the device. Every
/// pattern Herald ships is anchored (`^`) and made of hex digits and `.`, i.e. a fixed prefix with
/// wildcard nibbles, so this filter compiles such patterns to masks over at most 32 bytes and
/// matches them without a regex engine, an allocation or reference counting per advert.
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
    /// The other patterns' masks, tried in order (plain values: no copying or reference
    /// counting of the pattern text while matching).
    private let longMasks: [Mask]

    public init(patterns: [String]) throws(PatternError) {
        var compiled = [Pattern]()
        for text in patterns { compiled.append(try Pattern(text)) }
        self.init(compiled: compiled)
    }

    private init(compiled: [Pattern]) {
        patterns = compiled
        var set: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var long = [Mask]()
        for pattern in compiled {
            if pattern.mask.length == 1, pattern.mask.masks.0 == 0xFF {
                let b = UInt8(truncatingIfNeeded: pattern.mask.values.0)
                let bit = UInt64(1) << UInt64(b & 63)
                switch b >> 6 {
                case 0: set.0 |= bit
                case 1: set.1 |= bit
                case 2: set.2 |= bit
                default: set.3 |= bit
                }
            } else {
                long.append(pattern.mask)
            }
        }
        firstByteSet = set
        longMasks = long
    }

    /// Whether Apple manufacturer data (after the company ID) marks a device to ignore.
    public func matches(appleManufacturerData data: ArraySlice<UInt8>) -> Bool {
        data.withUnsafeBufferPointer { matches(appleManufacturerData: $0) }
    }

    /// Mirrors Herald's segment walk, including its failure: data ending in a lone byte that is
    /// not the overflow type makes Herald's parser throw, and Herald then ignores nothing.
    func matches(appleManufacturerData p: UnsafeBufferPointer<UInt8>) -> Bool {
        var matched = false
        var position = 0
        let end = p.count
        while position < end {
            let segmentEnd: Int
            if p[position] == 0x01 {
                segmentEnd = end
            } else {
                guard position + 1 < end else { return false }
                segmentEnd = position + 2 + min(Int(p[position + 1]), end - position - 2)
            }
            if !matched { matched = matches(segment: UnsafeBufferPointer(rebasing: p[position..<segmentEnd])) }
            position = segmentEnd
        }
        return matched
    }

    /// Whether one Apple segment (type, length, data) matches a pattern.
    public func matches(segment: ArraySlice<UInt8>) -> Bool {
        segment.withUnsafeBufferPointer { matches(segment: $0) }
    }

    func matches(segment p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = p.first else { return false }
        let bit = UInt64(1) << UInt64(first & 63)
        let word: UInt64
        switch first >> 6 {
        case 0: word = firstByteSet.0
        case 1: word = firstByteSet.1
        case 2: word = firstByteSet.2
        default: word = firstByteSet.3
        }
        if word & bit != 0 { return true }
        // The segment's first eight bytes, loaded once: most patterns are decided by them.
        let head = Mask.word(p, 0, p.count)
        return longMasks.withUnsafeBufferPointer { masks in
            for k in masks.indices where masks[k].matches(p, head: head) { return true }
            return false
        }
    }

    /// One anchored pattern: hex digits and `.` (one nibble each) after `^`, case-insensitive, at
    /// most 32 bytes. Held as masks and values over up to four little-endian 64-bit words.
    public struct Pattern: Hashable, Sendable, CustomStringConvertible {
        public static let maximumBytes = 32

        public let text: String
        let mask: Mask

        public init(_ text: String) throws(PatternError) {
            var chars = Substring(text).utf8.makeIterator()
            guard chars.next() == UInt8(ascii: "^") else {
                throw PatternError(pattern: text, problem: "must start with ^ (only patterns anchored at the segment start are supported)")
            }
            var masks = [UInt64](repeating: 0, count: 4), values = [UInt64](repeating: 0, count: 4)
            var nibble = 0
            while let c = chars.next() {
                let value: UInt64?
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt64(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = UInt64(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value = UInt64(c - UInt8(ascii: "A") + 10)
                case UInt8(ascii: "."): value = nil
                default: throw PatternError(pattern: text, problem: "may hold only hex digits and . after ^")
                }
                let byte = nibble / 2
                guard byte < Self.maximumBytes else {
                    throw PatternError(pattern: text, problem: "is longer than \(Self.maximumBytes) bytes")
                }
                // The first hex digit of a byte is its high nibble.
                let shift = UInt64(8 * (byte % 8) + (nibble % 2 == 0 ? 4 : 0))
                if let value {
                    masks[byte / 8] |= 0xF << shift
                    values[byte / 8] |= value << shift
                }
                nibble += 1
            }
            guard nibble > 0 else { throw PatternError(pattern: text, problem: "is empty; it would ignore every Apple device") }
            self.text = text
            self.mask = Mask(length: (nibble + 1) / 2, masks: (masks[0], masks[1], masks[2], masks[3]), values: (values[0], values[1], values[2], values[3]))
        }

        public var description: String { text }

        public static func == (a: Pattern, b: Pattern) -> Bool { a.text == b.text }
        public func hash(into hasher: inout Hasher) { hasher.combine(text) }
    }

    /// A compiled pattern: which nibbles of the first `length` bytes must have which values.
    struct Mask: Sendable {
        /// Bytes the pattern spans; a shorter segment never matches (a regex over hex needs as
        /// many digits as the pattern has characters, wildcards included).
        let length: Int
        let masks: (UInt64, UInt64, UInt64, UInt64)
        let values: (UInt64, UInt64, UInt64, UInt64)

        /// `head` is ``word(_:_:_:)`` 0 of `p`.
        @inline(__always)
        func matches(_ p: UnsafeBufferPointer<UInt8>, head: UInt64) -> Bool {
            guard p.count >= length, head & masks.0 == values.0 else { return false }
            return length <= 8
                || (Self.word(p, 1, length) & masks.1 == values.1
                    && (length <= 16 || Self.word(p, 2, length) & masks.2 == values.2)
                    && (length <= 24 || Self.word(p, 3, length) & masks.3 == values.3))
        }

        /// Bytes 8w..<min(8w+8, limit, count) of the segment, little-endian.
        @inline(__always)
        static func word(_ p: UnsafeBufferPointer<UInt8>, _ w: Int, _ limit: Int) -> UInt64 {
            let start = 8 * w
            let end = min(start + 8, limit, p.count)
            if end - start == 8, let base = p.baseAddress {
                return UInt64(littleEndian: UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self))
            }
            var value: UInt64 = 0
            var k = start
            while k < end {
                value |= UInt64(p[k]) << UInt64(8 * (k - start))
                k += 1
            }
            return value
        }
    }

    public struct PatternError: Error, Hashable, Sendable, CustomStringConvertible {
        public var pattern: String
        public var problem: String
        public var description: String { "device filter pattern \"\(pattern)\" \(problem)" }
    }
}
