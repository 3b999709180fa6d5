import Foundation

/// The simulation's only source of randomness: xoshiro256** seeded through SplitMix64.
///
/// Everything random in a simulated venue comes from one of these, so a seed fixes the whole run
/// (the system generator and Foundation's randomness are never used). Each device, person and
/// model gets its own stream (``init(seed:stream:)``), so adding a device or drawing one more
/// number for one device changes nothing for the others.
///
/// The distributions are written here rather than taken from the standard library's
/// `random(in:using:)`, whose algorithms may change between Swift releases and would change every
/// seeded result with them.
public struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator for `seed`.
    public init(seed: UInt64) {
        var mixer = SplitMix64(state: seed)
        s0 = mixer.next()
        s1 = mixer.next()
        s2 = mixer.next()
        s3 = mixer.next()
    }

    /// An independent stream of `seed` (e.g. one per device): its numbers do not depend on how many
    /// numbers other streams drew.
    public init(seed: UInt64, stream: UInt64) {
        self.init(seed: SplitMix64.mix(SplitMix64.mix(seed) ^ SplitMix64.mix(stream &+ 0x5851_F42D_4C95_7F2D)))
    }

    /// xoshiro256** (Blackman and Vigna).
    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, 45)
        return result
    }

    private func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    // MARK: Distributions

    /// Uniform in [0, 1), 53 bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in [lower, upper).
    public mutating func uniform(_ lower: Double, _ upper: Double) -> Double {
        lower + (upper - lower) * unit()
    }

    /// Uniform integer in [0, bound) without modulo bias (Lemire's method); 0 when `bound` ≤ 0.
    public mutating func below(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        let b = UInt64(bound)
        var product = next().multipliedFullWidth(by: b)
        if product.low < b {
            let threshold = (0 &- b) % b
            while product.low < threshold {
                product = next().multipliedFullWidth(by: b)
            }
        }
        return Int(product.high)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        unit() < p
    }

    /// Normal (Box–Muller; one of the pair, so each draw uses two numbers).
    public mutating func normal(mean: Double = 0, sd: Double = 1) -> Double {
        let u1 = 1 - unit()  // (0, 1]: log stays finite
        let u2 = unit()
        return mean + sd * (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// Log-normal with the given median and the standard deviation of its logarithm.
    public mutating func logNormal(median: Double, sigma: Double) -> Double {
        median * exp(normal(sd: sigma))
    }

    /// Exponential with the given mean.
    public mutating func exponential(mean: Double) -> Double {
        -mean * log(1 - unit())
    }

    /// An index chosen with probability proportional to its weight; nil when no weight is positive.
    public mutating func pick(weights: [Double]) -> Int? {
        let total = weights.reduce(0) { $0 + max($1, 0) }
        guard total > 0 else { return nil }
        var x = unit() * total
        for (i, w) in weights.enumerated() where w > 0 {
            if x < w { return i }
            x -= w
        }
        return weights.lastIndex { $0 > 0 }
    }
}

/// SplitMix64 (Steele, Lea and Flood): seeds xoshiro and mixes stream numbers into seeds.
public struct SplitMix64: Sendable {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The SplitMix64 finaliser: a bijective 64-bit hash.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
