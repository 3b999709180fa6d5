import Foundation
import Herald
import Sightings
import Testing
import VenueDiary
@testable import VenueNode

/// `diary replay` goes through the node's ``DiaryPipeline``: retention as the node runs it (on
/// the replayed time, never later than the replay's start), open visits of the diary left alone,
/// the visits the node's own loop would record from the same sightings, a file streamed from
/// disk as in memory.
@Suite struct SightingsReplayPipelineTests {
    let dir: ReplayDirectory
    init() throws { dir = try ReplayDirectory() }

    let t0 = Replayed.t0
    let day = 86_400.0

    /// Two phones, ten minutes each, two days apart, and one day of retention: the
    /// node running those two days would have deleted the first visit at its hourly purge on the
    /// second day; so does the replay.
    @Test func retentionRunsOnTheReplayedTime() throws {
        var rows = ["time,kind,payload,rssi"]
        for t in stride(from: 0, through: 600, by: 10) {
            rows.append("\(Int(t0) + t),herald,aa01,-60")
            rows.append("\(Int(t0 + 2 * day) + t),herald,bb02,-60")
        }
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let summary = try SightingsReplay.replay(
            csv: Array(rows.joined(separator: "\n").utf8), into: store, settings: Replayed.settings(recordingDays: 1),
            now: t0 + 30 * day)
        #expect(summary.visits == 2)
        #expect(try store.visits().map(\.payload) == [[0xBB, 0x02]])
    }

    /// Replaying an old file deletes what the node deleted then, not what it would delete now;
    /// a file stamped ahead of the clock (20 days: a wrong clock where it was made) is refused
    /// whole, and the diary is left as it was.
    @Test(arguments: [false, true])
    func retentionNeverCountsFromLaterThanTheReplayStarted(fileAheadOfTheClock: Bool) throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        let old = Replayed.heraldPayload(1), recent = Replayed.heraldPayload(2)
        try store.save([Replayed.visit(old, checkOut: t0 - 40 * day), Replayed.visit(recent, checkOut: t0 - 10 * day)])
        let now = fileAheadOfTheClock ? t0 - 20 * day : t0 + 100 * day
        let replay = { try SightingsReplay.replay(
            csv: Array(Replayed.evening.utf8), into: store, settings: Replayed.settings(recordingDays: 21), now: now) }
        if fileAheadOfTheClock {
            #expect(throws: SightingsCSVError.self) { _ = try replay() }
            #expect(try store.visits().map(\.payload) == [old, recent])
            return
        }
        _ = try replay()
        let kept = try store.visits().map(\.payload)
        // A node at t0 keeps 21 days, from t0 − 21 days: the old visit goes, the recent one stays.
        #expect(!kept.contains(old))
        #expect(kept.contains(recent))
        #expect(kept.filter { $0 == [0xAA, 0x01] }.count == 1)
    }

    /// A phone still present when the node stopped: its visit is open in the diary. A replay
    /// soon after is not a restart: it neither resumes nor closes that visit.
    @Test func openVisitsInTheDiaryAreLeftAlone() throws {
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        var live = try VenueDiary(store: store, settings: Replayed.settings(), now: t0 - 600)
        let key = live.key(for: .herald, payload: [0xAA, 0x01])
        for t in stride(from: t0 - 600, through: t0 - 10, by: 10) { live.record(key, time: t, rssi: -60) }
        try live.close(now: t0)
        let open = try store.openVisits()
        #expect(open.count == 1)

        _ = try SightingsReplay.replay(csv: Array(Replayed.evening.utf8), into: store, settings: Replayed.settings(), now: Replayed.soonAfter)
        #expect(try store.openVisits() == open)
        #expect(try store.visits().filter { !$0.isOpen }.count == 3)
    }

    /// The replay ticks only at seconds that have rows; the node ticks every second. From the
    /// same sightings, the node's own loop (``DiaryKeeper`` fed `.measure` events, a tick each
    /// second, every open visit closed at the end) records the same visits.
    @Test func theNodesLoopRecordsTheSameVisitsFromTheSameSightings() throws {
        let sightings = try SightingsCSV.parse(Array(Replayed.evening.utf8)).sorted { $0.time < $1.time }
        let replayed = try DiaryStore(path: dir.path("replayed.sqlite"))
        _ = try SightingsReplay.replay(sightings, into: replayed, settings: Replayed.settings(), now: Replayed.soonAfter)

        let live = try DiaryStore(path: dir.path("live.sqlite"))
        var notices: [DiaryKeeper.Notice] = []
        let boot = DiaryKeeper.BootReading(bootID: "b", wallMinusBoot: t0)
        var keeper = try DiaryKeeper(
            store: live, path: "live.sqlite", settings: Replayed.settings(), steady: 0, wall: t0, synchronised: true, boot: boot,
            notices: &notices)
        var next = sightings[...]
        for second in 0...1800 {
            let now = t0 + Double(second)
            let due = next.prefix { $0.time < now + 1 }
            keeper.record(due.map { SightingsReplay.event($0) }.map { $0.shifted(by: -t0) }, steady: Double(second), wall: now)
            next = next.dropFirst(due.count)
            try keeper.tick(steady: Double(second) + 0.999, wall: now + 0.999, synchronisation: { nil }, into: &notices)
        }
        keeper.checkOutAll(steady: 1800, into: &notices)
        try keeper.close(steady: 1800, into: &notices)

        func comparable(_ visits: [Visit]) -> [[Double]] {
            visits.map { [$0.checkIn, $0.lastSeen, $0.checkOut ?? -1, Double($0.samples), Double($0.rssiSum)] }.sorted { $0.lexicographicallyPrecedes($1) }
        }
        #expect(try comparable(replayed.visits()) == comparable(live.visits()))
        #expect(try replayed.visits().count == 3)
    }

    /// A file read in two passes from disk, in or out of time order, replays as the same rows
    /// held in memory; a bad line found by the first pass leaves the diary untouched.
    @Test(arguments: [false, true])
    func aStreamedFileReplaysAsTheSameRowsInMemory(shuffled: Bool) throws {
        var lines = Replayed.evening.split(separator: "\n").map(String.init)
        let header = lines.removeFirst()
        var random = SystemRandomNumberGenerator()
        if shuffled { lines.shuffle(using: &random) }
        let text = ([header] + lines).joined(separator: "\r\n") + "\r\n"
        let file = dir.path("s.csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))

        let memory = try DiaryStore(path: dir.path("memory.sqlite"))
        let expected = try SightingsReplay.replay(csv: Array(text.utf8), into: memory, settings: Replayed.settings(), now: Replayed.soonAfter)
        let streamed = try DiaryStore(path: dir.path("streamed.sqlite"))
        let summary = try SightingsReplay.replay(path: file, into: streamed, settings: Replayed.settings(), now: Replayed.soonAfter)
        #expect(summary == expected && summary.visits == 3)
        #expect(try streamed.visits() == memory.visits())

        try Data((text + "1795300000,gaen,zz,-60\n").utf8).write(to: URL(fileURLWithPath: file))
        let untouched = try DiaryStore(path: dir.path("untouched.sqlite"))
        #expect(throws: SightingsCSVError.self) {
            try SightingsReplay.replay(path: file, into: untouched, settings: Replayed.settings(), now: Replayed.soonAfter)
        }
        #expect(try untouched.visits().isEmpty)
    }

    /// One target a (kind, payload): the same row always maps to the same target, another kind
    /// or payload to another.
    @Test func eachKindAndPayloadIsOneTarget() {
        let a = SightingsReplay.targetID(.herald, [0xAA, 0x01])
        #expect(a == SightingsReplay.targetID(.herald, [0xAA, 0x01]))
        #expect(a != SightingsReplay.targetID(.gaen, [0xAA, 0x01]))
        #expect(a != SightingsReplay.targetID(.herald, [0xAA, 0x02]))
        #expect(a != SightingsReplay.targetID(.herald, [0xAA, 0x01, 0x00]))
    }
}

extension SensorEvent {
    /// The event with its time moved (wall time to the keeper's steady time).
    fileprivate func shifted(by delta: Double) -> SensorEvent {
        guard case .measure(let target, let rssi, let payload, let txPower, let time) = self else { return self }
        return .measure(target, rssi: rssi, payload: payload, txPower: txPower, time: time + delta)
    }
}
