/// A btsnoop record time: microseconds since midnight, 1 January of year 0 (as BlueZ and Android
/// write it: microseconds since 2000-01-01 plus 0x00E03AB44A676000).
public struct BTSnoopTimestamp: RawRepresentable, Hashable, Sendable, Comparable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// Microseconds from year 0 to 2000-01-01 00:00:00 UTC.
    public static let offset2000: Int64 = 0x00E0_3AB4_4A67_6000
    /// Seconds from the Unix epoch to 2000-01-01 00:00:00 UTC.
    static let unixSecondsAt2000: Int64 = 946_684_800

    /// From microseconds since 1970-01-01 00:00:00 UTC.
    public init(unixMicroseconds: Int64) {
        rawValue = unixMicroseconds - Self.unixSecondsAt2000 * 1_000_000 + Self.offset2000
    }

    /// Microseconds since 1970-01-01 00:00:00 UTC.
    public var unixMicroseconds: Int64 { rawValue - Self.offset2000 + Self.unixSecondsAt2000 * 1_000_000 }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
