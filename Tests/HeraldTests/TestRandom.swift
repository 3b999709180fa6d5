import BLEHost

/// A small deterministic generator (SplitMix64: a golden-ratio counter through the finaliser
/// the node's word hashes use) for randomized tests, so a failure can be replayed.
struct TestRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return wordHash(state, seed: 0)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
