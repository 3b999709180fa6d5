import BLEHost

/// Where the target table finds a target by its current address or by its pseudo device address:
/// one open-addressing hash table for both kinds of key (both are 48-bit words, told apart by a
/// tag bit).
///
/// Every advert looks a target up here, and in an advert flood every advert also adds one and
/// forgets another. Entries (key and id, 16 bytes) sit side by side, so a lookup usually reads
/// one cache line; `Dictionary` keeps a bitmap, its keys and its values in three arrays, and two
/// dictionaries (one per kind of key) touched twice as many. Linear probing, and deletion shifts
/// later entries back instead of leaving tombstones, so probes stay short however many targets
/// come and go. The hash is ``wordHash(_:seed:)`` with a seed drawn per table: a radio peer
/// cannot choose addresses that collide.
struct TargetIndex: Sendable {
    /// A key: an address or a pseudo device address, tagged; never zero (zero marks a free entry).
    struct Key: Equatable, Sendable {
        fileprivate let word: UInt64

        static func address(_ address: BluetoothAddress) -> Key { Key(word: address.rawValue | 1 << 62) }
        static func pseudo(_ pseudo: PseudoDeviceAddress) -> Key { Key(word: pseudo.rawValue | 1 << 63) }
    }

    private struct Entry: Sendable {
        var key: UInt64
        var id: TargetID
    }

    private static let free = Entry(key: 0, id: TargetID(rawValue: 0))
    private var entries: [Entry]
    /// Capacity − 1 (the capacity is a power of two).
    private var mask: Int
    private let seed: Int
    /// Keys held.
    private(set) var count = 0

    init(seed: Int = .random(in: .min ... .max)) {
        self.seed = seed
        entries = Array(repeating: Self.free, count: 64)
        mask = 63
    }

    /// The target a key leads to; setting nil removes the key.
    subscript(key: Key) -> TargetID? {
        get {
            let (i, found) = position(of: key.word)
            return found ? entries[i].id : nil
        }
        set {
            if let id = newValue {
                insert(key.word, id)
            } else {
                let (i, found) = position(of: key.word)
                if found { delete(at: i) }
            }
        }
    }

    /// Removes the key if it still leads to `id` (another target may have taken the address).
    mutating func remove(_ key: Key, ifLeadingTo id: TargetID) {
        let (i, found) = position(of: key.word)
        if found, entries[i].id == id { delete(at: i) }
    }

    private func home(_ word: UInt64) -> Int {
        Int(truncatingIfNeeded: wordHash(word, seed: seed)) & mask
    }

    /// Where `word` is, or the free entry where it would go.
    private func position(of word: UInt64) -> (Int, found: Bool) {
        var i = home(word)
        while true {
            let key = entries[i].key
            if key == word { return (i, true) }
            if key == 0 { return (i, false) }
            i = (i + 1) & mask
        }
    }

    private mutating func insert(_ word: UInt64, _ id: TargetID) {
        var (i, found) = position(of: word)
        if found {
            entries[i].id = id
            return
        }
        // At most half full: probes, and the runs a deletion walks, stay a few entries long.
        if (count + 1) * 2 > entries.count {
            grow()
            i = position(of: word).0
        }
        entries[i] = Entry(key: word, id: id)
        count += 1
    }

    private mutating func grow() {
        let old = entries
        entries = Array(repeating: Self.free, count: old.count * 2)
        mask = entries.count - 1
        for entry in old where entry.key != 0 {
            entries[position(of: entry.key).0] = entry
        }
    }

    /// Frees entry `hole`, moving back each later entry of its run that may then be found
    /// sooner (one whose home is not between the hole and where it sits).
    private mutating func delete(at start: Int) {
        var hole = start
        var i = start
        while true {
            i = (i + 1) & mask
            let key = entries[i].key
            if key == 0 { break }
            let home = home(key)
            let reachable = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i)
            if !reachable {
                entries[hole] = entries[i]
                hole = i
            }
        }
        entries[hole] = Self.free
        count -= 1
    }
}
