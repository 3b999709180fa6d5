import Testing
@testable import BLEHost

@Suite struct WordHashingTests {
    /// Through a generic `Hashable` (as `Dictionary` asks), the word hash answers, not SipHash.
    func raw<T: Hashable>(_ value: T, seed: Int) -> Int { value._rawHashValue(seed: seed) }

    @Test func dictionariesGetTheWordHash() {
        let address = BluetoothAddress(rawValue: 0xC0FF_EE12_3456)
        #expect(raw(address, seed: 7) == Int(bitPattern: UInt(wordHash(0xC0FF_EE12_3456, seed: 7))))
        #expect(raw(address, seed: 7) != raw(address, seed: 8))
        #expect(raw(address, seed: 7) == raw(BluetoothAddress("C0:FF:EE:12:34:56")!, seed: 7))
    }

    /// Addresses that differ only in a few bits (sequential, or only in the top bytes as a
    /// vendor prefix does) spread over a table's low bits like random ones.
    @Test(arguments: [0, 24, 40]) func similarAddressesSpreadOverTheLowBits(shift: Int) {
        let buckets = 4096
        var load = [Int](repeating: 0, count: buckets)
        for i in 0..<UInt64(buckets * 16) {
            let address = BluetoothAddress(rawValue: i << UInt64(shift) | (shift == 40 ? i >> 8 : 0))
            load[raw(address, seed: 12345) & (buckets - 1)] += 1
        }
        // 16 a bucket on average; a uniform hash keeps the fullest bucket under 40 (Poisson
        // tail), an identity-like hash leaves most buckets empty.
        #expect(load.max()! < 40)
        #expect(load.filter { $0 == 0 }.count < buckets / 100)
    }

    @Test func aDictionaryOfManyAddressesFindsEveryOne() {
        var index: [BluetoothAddress: Int] = [:]
        for i in 0..<100_000 { index[BluetoothAddress(rawValue: UInt64(i) &* 0x1_0001)] = i }
        #expect(index.count == 100_000)
        #expect((0..<100_000).allSatisfy { index[BluetoothAddress(rawValue: UInt64($0) &* 0x1_0001)] == $0 })
        #expect(index[BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF)] == nil)
        #expect(Set([address(1), address(1), address(2)]).count == 2)
    }

    func address(_ value: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: value) }
}
