/// Hashing for one-word identifiers that key dictionaries on every advert (Bluetooth addresses,
/// Herald pseudo addresses, the node's target ids).
///
/// `Dictionary` asks a key for `_rawHashValue(seed:)`, whose default runs SipHash-1-3 over what
/// `hash(into:)` feeds it: about 20 ns for one word, a third of an advert's dictionary work in
/// `advert-bench`. A type whose identity is one `UInt64` answers with SplitMix64's finaliser
/// over the word and the dictionary's seed instead: every input bit reaches the low bits a
/// table indexes by, and the seed is per dictionary storage and per process, so a radio peer
/// cannot choose addresses that collide. `hash(into:)` (used by `Hasher`, `hashValue` and sets
/// of composite keys) still feeds the word to SipHash.
public protocol WordHashable: Hashable {
    /// The value's whole identity as one word: equal values, equal words.
    var hashWord: UInt64 { get }
}

extension WordHashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(hashWord) }

    public func _rawHashValue(seed: Int) -> Int { Int(bitPattern: UInt(wordHash(hashWord, seed: seed))) }
}

/// SplitMix64's output function over `word` offset by `seed` times the golden ratio.
@inlinable
public func wordHash(_ word: UInt64, seed: Int) -> UInt64 {
    var z = word &+ UInt64(bitPattern: Int64(seed)) &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}
