import Testing

@testable import Simulation

@Suite struct SimulationRandomTests {
    @Test func splitMixMatchesTheReferenceVector() {
        // Vigna's splitmix64.c seeded with 0: the first outputs.
        var mixer = SplitMix64(state: 0)
        #expect(mixer.next() == 0xE220_A839_7B1D_CDAF)
        #expect(mixer.next() == 0x6E78_9E6A_A1B9_65F4)
    }

    @Test func sameSeedSameNumbers() {
        var a = SimulationRandom(seed: 42)
        var b = SimulationRandom(seed: 42)
        var c = SimulationRandom(seed: 43)
        let first = (0..<100).map { _ in a.next() }
        #expect(first == (0..<100).map { _ in b.next() })
        #expect(first != (0..<100).map { _ in c.next() })
    }

    @Test func streamsAreIndependentOfEachOther() {
        var one = SimulationRandom(seed: 7, stream: 1)
        var two = SimulationRandom(seed: 7, stream: 2)
        var oneAgain = SimulationRandom(seed: 7, stream: 1)
        let a = (0..<16).map { _ in one.next() }
        #expect(a != (0..<16).map { _ in two.next() })
        #expect(a == (0..<16).map { _ in oneAgain.next() })
    }

    @Test func uniformAndNormalHaveTheirMoments() {
        var random = SimulationRandom(seed: 1)
        let n = 200_000
        let units = (0..<n).map { _ in random.unit() }
        #expect(units.allSatisfy { $0 >= 0 && $0 < 1 })
        let mean = units.reduce(0, +) / Double(n)
        #expect(abs(mean - 0.5) < 0.005)

        let normals = (0..<n).map { _ in random.normal(mean: 3, sd: 2) }
        let m = normals.reduce(0, +) / Double(n)
        let sd = (normals.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(n)).squareRoot()
        #expect(abs(m - 3) < 0.02)
        #expect(abs(sd - 2) < 0.02)

        let exponentials = (0..<n).map { _ in random.exponential(mean: 5) }
        #expect(abs(exponentials.reduce(0, +) / Double(n) - 5) < 0.1)

        let logNormals = (0..<n).map { _ in random.logNormal(median: 10, sigma: 0.8) }.sorted()
        #expect(abs(logNormals[n / 2] - 10) < 0.2)
    }

    @Test func belowIsInRangeAndEven() {
        var random = SimulationRandom(seed: 9)
        var counts = [Int](repeating: 0, count: 7)
        for _ in 0..<70_000 {
            let k = random.below(7)
            counts[k] += 1
        }
        #expect(counts.allSatisfy { abs($0 - 10_000) < 500 })
        #expect(random.below(1) == 0)
        #expect(random.below(0) == 0)
    }

    @Test func pickFollowsWeightsAndSkipsZeros() {
        var random = SimulationRandom(seed: 3)
        var counts = [0, 0, 0]
        for _ in 0..<30_000 {
            counts[random.pick(weights: [1, 0, 3]) ?? 0] += 1
        }
        #expect(counts[1] == 0)
        #expect(abs(Double(counts[2]) / 30_000 - 0.75) < 0.02)
        #expect(random.pick(weights: [0, 0]) == nil)
        #expect(random.pick(weights: []) == nil)
    }
}
