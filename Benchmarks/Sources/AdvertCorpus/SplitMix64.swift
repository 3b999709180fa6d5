/// A tiny deterministic generator (SplitMix64): the same seed gives the same capture on every
/// machine and Swift version, which the standard library's generators do not promise.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (bound > 0).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A byte.
    public mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}

/// A stateless 64-bit mix of a value (for content derived from a device and an epoch).
public func mix64(_ value: UInt64) -> UInt64 {
    var g = SplitMix64(seed: value)
    return g.next()
}
