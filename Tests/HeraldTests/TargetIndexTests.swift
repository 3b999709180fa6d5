import BLEHost
import Testing

@testable import Herald

@Suite struct TargetIndexTests {
    /// Random inserts, overwrites and removals over a small key space (long probe runs, wrap
    /// around the end, growth, backward-shift deletion) agree with a dictionary at every step.
    @Test(arguments: [0, 1, 0x5DEE_CE66D])
    func agreesWithADictionary(seed: Int) {
        var index = TargetIndex(seed: seed)
        var model: [UInt64: TargetID] = [:]  // key word → id, addresses below 1 << 48, pseudo above
        var random = TestRandom(state: UInt64(seed) &+ 7)
        func key(_ word: UInt64) -> TargetIndex.Key {
            word < 1 << 48 ? .address(BluetoothAddress(rawValue: word)) : .pseudo(PseudoDeviceAddress(rawValue: word - (1 << 48)))
        }
        for step in 0..<20_000 {
            // Addresses and pseudo addresses with the same low bits: tags keep them apart.
            let low = random.next() % 600
            let word = random.next() % 2 == 0 ? low : 1 << 48 | low
            let id = TargetID(rawValue: random.next() % 1000 + 1)
            switch random.next() % 4 {
            case 0, 1:
                index[key(word)] = id
                model[word] = id
            case 2:
                index[key(word)] = nil
                model[word] = nil
            default:
                // Removes only when the key still leads to that target.
                let expected = model[word]
                let asked = random.next() % 2 == 0 ? (expected ?? id) : id
                index.remove(key(word), ifLeadingTo: asked)
                if expected == asked { model[word] = nil }
            }
            if step % 97 == 0 {
                for probe in [low, 1 << 48 | low, (low + 1) % 600, 1 << 48 | ((low + 7) % 600)] {
                    #expect(index[key(probe)] == model[probe])
                }
            }
            #expect(index.count == model.count)
        }
        for low in UInt64(0)..<600 {
            #expect(index[key(low)] == model[low])
            #expect(index[key(1 << 48 | low)] == model[1 << 48 | low])
        }
    }

    @Test func holdsAHundredThousandTargets() {
        var index = TargetIndex()
        for n in UInt64(1)...100_000 { index[.address(BluetoothAddress(rawValue: n &* 0x9E37_79B9))] = TargetID(rawValue: n) }
        #expect(index.count == 100_000)
        #expect((UInt64(1)...100_000).allSatisfy { index[.address(BluetoothAddress(rawValue: $0 &* 0x9E37_79B9))] == TargetID(rawValue: $0) })
        #expect(index[.pseudo(PseudoDeviceAddress(rawValue: 0x9E37_79B9))] == nil)
    }
}
