import Foundation
import Herald
import Testing
import VenueDiary
@testable import VenueNode

/// `diary replay` of an evening under an advert flood, through the node's own pipeline: the
/// phones' visits as without the flood, and the summary counting what admission dropped.
@Suite struct SightingsReplayFloodTests {
    let dir: ReplayDirectory
    init() throws { dir = try ReplayDirectory() }

    @Test func aFloodedReplayRecordsThePhonesAndCountsTheFlood() throws {
        let t0 = Replayed.t0
        var state: UInt64 = 0x24
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
        // 10 phones seen once a minute for 8 minutes (at second 7 + 4 n of each minute), and
        // 2,000 distinct random GAEN identifiers a second for the first 4 minutes.
        var sightings: [Sighting] = []
        let phones = (0..<10).map { n in [0xAB, UInt8(n)] + [UInt8](repeating: 0, count: 14) }
        for second in 0..<480 {
            for (n, phone) in phones.enumerated() where second % 60 == 7 + 4 * n {
                sightings.append(Sighting(time: t0 + Double(second) + 0.5, kind: .gaen, payload: phone, rssi: -60))
            }
            guard second < 240 else { continue }
            for i in 0..<2_000 {
                let words = (next(), next())
                let payload = withUnsafeBytes(of: words) { Array($0) }
                sightings.append(Sighting(time: t0 + Double(second) + Double(i) / 2_000, kind: .gaen, payload: payload, rssi: -80))
            }
        }
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try SightingsReplay.replay(sightings, into: store, settings: Replayed.settings(), now: Replayed.soonAfter)
        #expect(summary.visits == phones.count)
        #expect(summary.seenOnce == 2_000 * 240 && summary.walkPasts == summary.seenOnce)
        #expect(summary.forgottenEarly == 0 && summary.pendingEvicted == 0)
        let visits = try store.visits()
        #expect(visits.map(\.payload) == phones)
        #expect(visits.enumerated().allSatisfy { n, visit in
            visit.checkIn == t0 + Double(7 + 4 * n) + 0.5 && visit.checkOut == t0 + Double(420 + 7 + 4 * n) + 0.5 && visit.samples == 8
        })
    }

    /// The live node's diary loop: each minute of flood is logged once, with the totals, and
    /// goes on the status line; a quiet minute clears it.
    @Test func theKeeperLogsAMinuteOfFloodAndTheStatusLineShowsIt() throws {
        let t0 = Replayed.t0
        var notices: [DiaryKeeper.Notice] = []
        var keeper = try DiaryKeeper(
            store: DiaryStore(path: dir.path("live.sqlite")), path: "live.sqlite", settings: Replayed.settings(), steady: 0, wall: t0,
            synchronised: true, boot: .init(bootID: "b", wallMinusBoot: t0), notices: &notices)
        notices.removeAll()
        var n: UInt64 = 0
        func flood(_ count: Int, at second: Int) -> [SensorEvent] {
            (0..<count).map { _ in
                n += 1
                let payload = withUnsafeBytes(of: (n, UInt64(0xF100D))) { Array($0) }
                return SightingsReplay.event(Sighting(time: Double(second), kind: .gaen, payload: payload, rssi: -70))
            }
        }
        func warnings() -> [String] {
            notices.compactMap { if case .log(let line) = $0, line.level == .warning { line.text } else { nil } }
        }
        // 20 identifiers a second for six minutes (seconds 1–360), each seen once and forgotten
        // when more than check_out (300 s) old: 1,180 in the minute to 360 s, then 1,200 a minute
        // to 660 s, 20 in the minute to 720 s (quiet).
        var status: [Int: DiaryKeeper.Admission] = [:]
        for second in 1...720 {
            keeper.record(second <= 360 ? flood(20, at: second) : [], steady: Double(second), wall: t0 + Double(second))
            try keeper.tick(steady: Double(second), wall: t0 + Double(second), synchronisation: { nil }, into: &notices)
            status[second] = keeper.admissionLastMinute
            if second == 359 { #expect(warnings().isEmpty) }
        }
        #expect(keeper.admission == DiaryKeeper.Admission(seenOnce: 20 * 360))
        let logged = warnings()
        #expect(logged.count == 6)
        #expect(logged.first?.hasPrefix("diary admission in the last minute: 1180 identifiers seen once, not tracked; since start 1180 seen once") == true)
        #expect(status[359]?.looksLikeAFlood == false && status[360]?.seenOnce == 1180 && status[719]?.seenOnce == 1200)
        #expect(status[720] == DiaryKeeper.Admission())
        #expect(NodeLoop.admissionStatus(status[600]!) == "; flood in the last minute: 1200 identifiers seen once")
        #expect(NodeLoop.admissionStatus(.init(seenOnce: 5)) == "")
    }
}
