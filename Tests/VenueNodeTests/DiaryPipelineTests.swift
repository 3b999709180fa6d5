import BLEHost
import Foundation
import Herald
import Sightings
import Testing
import VenueDiary
@testable import VenueNode

/// Sensor events into the diary on a manual clock: node time t, wall time t + offset.
@Suite final class DiaryPipelineTests {
    let directory: URL
    let offset = 1_700_000_000.0

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("venue-node-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func pipeline(checkIn: Double = 120, checkOut: Double = 300, recordingDays: Int? = 31) throws -> (DiaryPipeline, DiaryStore) {
        let store = try DiaryStore(path: directory.appendingPathComponent("diary-\(UUID().uuidString).sqlite").path)
        let settings = DiarySettings(checkInSeconds: checkIn, checkOutSeconds: checkOut, recordingDays: recordingDays)
        // Written at every tick, so the tests see what the pipeline did (the live policy batches).
        let everyTick = FlushPolicy(interval: 0, maxPendingChanges: 10_000, checkInsWithin: 0)
        return (DiaryPipeline(diary: try VenueDiary(store: store, settings: settings, now: offset, policy: everyTick)), store)
    }

    static func target(_ id: UInt64, address: UInt64? = nil) -> Target {
        Target(id: TargetID(rawValue: id), address: BluetoothAddress(rawValue: address ?? 0xC0_0000_0000 + id), addressType: .random)
    }

    static func herald(_ id: Int32) -> SensorPayload { SensorPayload(kind: .herald, bytes: TestPayload.make(identifier: id)) }

    /// Ticks every second from `from` through `to` (node time) and returns all changes.
    func run(_ p: inout DiaryPipeline, from: Double, to: Double) throws -> [VisitChange] {
        var changes: [VisitChange] = []
        for t in stride(from: from, through: to, by: 1) { changes += try p.tick(now: t + offset) }
        return changes
    }

    @Test func earlierMeasurementsAreAttributedAndTheVisitChecksInAtItsFirstSighting() throws {
        var (p, store) = try pipeline()
        let phone = Self.target(1)
        // Adverts measured before the payload was read; the node holds them and hands them over.
        p.handle(.detect(phone, time: 10), wallOffset: offset)
        p.handle(.measure(phone, rssi: -60, payload: nil, time: 10), wallOffset: offset)
        let earlier = [RSSISample(time: 10, rssi: -60), RSSISample(time: 20, rssi: -64)]
        p.handle(.read(phone, payload: Self.herald(1), earlier: earlier, time: 25), wallOffset: offset)
        for t in stride(from: 30.0, through: 140, by: 10) { p.handle(.measure(phone, rssi: -62, payload: Self.herald(1), time: t), wallOffset: offset) }
        let changes = try run(&p, from: 0, to: 141)
        #expect(changes.map(\.event) == [.checkedIn])
        let visit = try #require(store.visits().first)
        #expect(visit.checkIn == 10 + offset)
        #expect(visit.lastSeen == 140 + offset)
        #expect(visit.samples == 2 + 12)  // the read itself carries no RSSI
        #expect(visit.rssiMax == -60)
        #expect(p.counters.attributed == 2)
        #expect(p.counters.sightings == 13)
        #expect(p.cachedKeys == 1)
        // Unused for the key lifetime, the cached key goes (a later sighting registers it again).
        _ = try run(&p, from: 141, to: 141 + DiaryPipeline.keyLifetime + 61)
        #expect(p.cachedKeys == 0)
    }

    /// Closing time (opening hours): open visits end at their last sighting at once, not after
    /// the check-out limit, and the pipeline records on afterwards.
    @Test func checkOutAllClosesOpenVisitsAtTheirLastSighting() throws {
        var (p, store) = try pipeline(checkIn: 10, checkOut: 300)
        let phone = Self.target(1)
        for t in stride(from: 0.0, through: 40, by: 5) { p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: t), wallOffset: offset) }
        #expect(try run(&p, from: 0, to: 50).map(\.event) == [.checkedIn])
        #expect(try p.checkOutAll(now: 51 + offset).map(\.event) == [.checkedOut])
        let closed = try #require(store.visits().first)
        #expect(closed.checkOut == 40 + offset)

        // Open again: the same phone makes a new visit.
        for t in stride(from: 100.0, through: 120, by: 5) { p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: t), wallOffset: offset) }
        #expect(try run(&p, from: 100, to: 121).map(\.event) == [.checkedIn])
        #expect(try store.visits().count == 2)
    }

    @Test func sightingsWithoutRSSICheckInAndCloseAtTheLastSighting() throws {
        // btvirt: every report has RSSI 127 (nil); presence must still count.
        var (p, store) = try pipeline(checkIn: 5, checkOut: 10)
        let phone = Self.target(7)
        p.handle(.read(phone, payload: Self.herald(7), earlier: [.init(time: 0, rssi: nil)], time: 1), wallOffset: offset)
        for t in stride(from: 2.0, through: 8, by: 1) { p.handle(.measure(phone, rssi: nil, payload: Self.herald(7), time: t), wallOffset: offset) }
        let changes = try run(&p, from: 0, to: 30)
        #expect(changes.map(\.event) == [.checkedIn, .checkedOut])
        let visit = try #require(store.visits().first)
        #expect(visit.checkIn == offset && visit.checkOut == 8 + offset)
        #expect(visit.samples == 0)
    }

    @Test func sharesDetectionsAndUnattributedMeasurementsAreNotVisits() throws {
        var (p, store) = try pipeline(checkIn: 1, checkOut: 10)
        let phone = Self.target(3)
        p.handle(.detect(phone, time: 0), wallOffset: offset)
        for t in 0..<5 { p.handle(.measure(phone, rssi: -50, payload: nil, time: Double(t)), wallOffset: offset) }
        p.handle(.share(phone, payloads: [Self.herald(4), Self.herald(5)], rssi: -50, time: 4), wallOffset: offset)
        p.handle(.bluetoothState(.running, time: 4), wallOffset: offset)
        _ = try run(&p, from: 0, to: 30)
        #expect(try store.visits().isEmpty)
        #expect(p.counters.sharedPayloads == 2)
        #expect(p.counters.sightings == 0)
    }

    @Test func oneVisitPerPayloadAcrossTargetsAndKinds() throws {
        var (p, store) = try pipeline(checkIn: 5, checkOut: 60)
        // The same phone behind two targets (address rotation without a pseudo address): one visit.
        let before = Self.target(1, address: 0xC1), after = Self.target(2, address: 0xC2)
        p.handle(.read(before, payload: Self.herald(9), earlier: [], time: 0), wallOffset: offset)
        p.handle(.measure(before, rssi: -60, payload: Self.herald(9), time: 3), wallOffset: offset)
        p.handle(.read(after, payload: Self.herald(9), earlier: [], time: 5), wallOffset: offset)
        p.handle(.measure(after, rssi: -61, payload: Self.herald(9), time: 9), wallOffset: offset)
        // A GAEN identifier with the same bytes is another identity. As the node reports a GAEN
        // advert of a new target: the payload learned, then measured; each later advert measured
        // with the payload as learned (metadata included). Admitted at its second sighting.
        let gaen = Self.target(3)
        let rpi = SensorPayload(kind: .gaen, bytes: Array(0..<16), metadata: 0x4008_0000)
        p.handle(.read(gaen, payload: rpi, earlier: [], time: 0), wallOffset: offset)
        p.handle(.measure(gaen, rssi: -70, payload: rpi, time: 0), wallOffset: offset)
        p.handle(.measure(gaen, rssi: -70, payload: rpi, time: 9), wallOffset: offset)
        _ = try run(&p, from: 0, to: 10)
        let visits = try store.visits()
        #expect(visits.map(\.kind) == [.herald, .gaen] || visits.map(\.kind) == [.gaen, .herald])
        #expect(visits.first { $0.kind == .herald }?.samples == 2)
        #expect(visits.first { $0.kind == .gaen }?.payload == Array(0..<16))
        // The identifier's metadata is stored with its visit; Herald visits have none.
        #expect(visits.first { $0.kind == .gaen }?.metadata == [0x40, 0x08, 0, 0])
        #expect(visits.first { $0.kind == .herald }?.metadata == nil)
    }

    @Test func aTargetWhosePayloadChangesRecordsTheNewPayload() throws {
        var (p, store) = try pipeline(checkIn: 2, checkOut: 60)
        let phone = Self.target(1)
        p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: 0), wallOffset: offset)
        p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: 3), wallOffset: offset)
        p.handle(.measure(phone, rssi: -60, payload: Self.herald(2), time: 4), wallOffset: offset)
        p.handle(.measure(phone, rssi: -60, payload: Self.herald(2), time: 7), wallOffset: offset)
        _ = try run(&p, from: 0, to: 8)
        #expect(Set(try store.visits().map(\.payload)) == [Self.herald(1).bytes, Self.herald(2).bytes])
    }

    /// The pipeline forgets a target's cached key after ``DiaryPipeline/keyLifetime`` and the
    /// tracker the identity's key after an hour: a phone back after longer is a new visit.
    @Test func releasedKeysAreRegisteredAgain() throws {
        var (p, store) = try pipeline(checkIn: 5, checkOut: 30)
        let phone = Self.target(1)
        for t in stride(from: 0.0, through: 10, by: 1) { p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: t), wallOffset: offset) }
        // Gone for longer than the tracker keeps an idle identity's key (an hour).
        _ = try run(&p, from: 0, to: 3_700)
        for t in stride(from: 3_701.0, through: 3_710, by: 1) { p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: t), wallOffset: offset) }
        _ = try run(&p, from: 3_701, to: 3_800)
        #expect(p.counters.rekeyed == 0)  // the cache let go first: no stale key was used
        #expect(p.cachedKeys == 1)
        #expect(try store.visits().count == 2)
    }

    @Test func retentionRunsAtTheFirstTickAndHourlyAfter() throws {
        var (p, store) = try pipeline(checkIn: 1, checkOut: 5, recordingDays: 1)
        // A visit that ended two days ago.
        try store.save([Visit(kind: .herald, payload: [1], checkIn: offset - 2 * 86_400 - 100, lastSeen: offset - 2 * 86_400, checkOut: offset - 2 * 86_400, samples: 1, rssiMax: -60, rssiSum: -60)])
        _ = try run(&p, from: 0, to: 0)
        #expect(p.counters.purges == 1 && p.counters.purged == 1)
        #expect(try store.visits().isEmpty)
        _ = try run(&p, from: 1, to: 3_599)
        #expect(p.counters.purges == 1)
        _ = try run(&p, from: 3_600, to: 3_601)
        #expect(p.counters.purges == 2)
    }

    /// A node that never synchronises its clock still applies `recording_days`, on its own
    /// timeline: visits recorded on the unsynchronised clock age by that clock.
    @Test func retentionRunsOnTheDevicesOwnTimelineWhenTheClockNeverSynchronises() throws {
        let store = try DiaryStore(path: directory.appendingPathComponent("diary-unsynced.sqlite").path)
        let clock = DiaryClock.unsynchronised(bootID: "boot-1", wallMinusBoot: offset - 100)
        let settings = DiarySettings(checkInSeconds: 1, checkOutSeconds: 5, recordingDays: 1)
        func visit(endingDaysAgo days: Double, payload: UInt8) -> Visit {
            let end = offset - days * 86_400
            return Visit(kind: .herald, payload: [payload], checkIn: end - 100, lastSeen: end, checkOut: end, samples: 1, rssiMax: -60, rssiSum: -60)
        }
        try store.save([visit(endingDaysAgo: 3, payload: 1), visit(endingDaysAgo: 0.5, payload: 2)], clock: clock)
        var p = DiaryPipeline(diary: try VenueDiary(store: store, settings: settings, now: offset, policy: .replay, clock: clock))
        _ = try run(&p, from: 0, to: 2)
        #expect(p.counters.purged == 1)
        #expect(try store.visits().map(\.payload) == [[2]])
        #expect(try store.visits().allSatisfy(\.clockUncorrected))
    }

    @Test func closeLeavesPresentVisitsOpenForTheNextStart() throws {
        var (p, store) = try pipeline(checkIn: 2, checkOut: 60)
        let phone = Self.target(1)
        for t in 0...5 { p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: Double(t)), wallOffset: offset) }
        _ = try p.close(now: 6 + offset)
        let visit = try #require(store.visits().first)
        #expect(visit.isOpen && visit.lastSeen == 5 + offset)
    }

    /// What the node reports for an advert that brings a new target with its payload in it (a
    /// GAEN advert: `SensorNode.advert` learns the payload, then measures): `.read` with no
    /// earlier measurements, then `.measure`. Under a flood of 6,000 such adverts a second, each a
    /// new identifier, the identifiers are seen once and never tracked (before, the `.read`
    /// admitted each at once: 360,000 pending visits, the tracker full and evicting), and ten
    /// phones seen once a minute from one address each are recorded whole.
    @Test func advertBorneIdentifiersOfNewTargetsGoThroughAdmission() throws {
        var (p, store) = try pipeline()
        var state: UInt64 = 0x6000
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
        func advert(_ target: Target, _ payload: SensorPayload, rssi: Int, time: Double, new: Bool) {
            if new { p.handle(.read(target, payload: payload, earlier: [], time: time), wallOffset: offset) }
            p.handle(.measure(target, rssi: rssi, payload: payload, txPower: nil, time: time), wallOffset: offset)
        }
        let phones = (0..<10).map { n in SensorPayload(kind: .gaen, bytes: [0xAB, UInt8(n)] + [UInt8](repeating: 0, count: 14)) }
        var flooded: UInt64 = 0
        for second in 0..<360 {
            for (n, phone) in phones.enumerated() where second % 60 == 7 + 4 * n {
                advert(Self.target(UInt64(n) + 1), phone, rssi: -60, time: Double(second) + 0.5, new: second < 60)
            }
            if second < 60 {
                for i in 0..<6_000 {
                    flooded += 1
                    let rpi = withUnsafeBytes(of: (next(), next())) { Array($0) }
                    advert(Self.target(1_000 + flooded), SensorPayload(kind: .gaen, bytes: rpi), rssi: -80, time: Double(second) + Double(i) / 6_000, new: true)
                }
            }
            _ = try p.tick(now: Double(second) + offset)
        }
        _ = try run(&p, from: 360, to: 700)
        let counters = p.diary.tracker.counters
        #expect(counters.pendingVisitsEnded == 0 && counters.identitiesEvicted == 0, "\(counters)")
        #expect(counters.seenOnce == Int(flooded), "\(counters)")
        let visits = try store.visits()
        #expect(visits.map(\.payload) == phones.map(\.bytes))
        #expect(visits.enumerated().allSatisfy { n, visit in
            visit.checkIn == Double(7 + 4 * n) + 0.5 + offset && visit.checkOut == Double(300 + 7 + 4 * n) + 0.5 + offset && visit.samples == 6
        })
    }

    /// A flood of new targets, each with a new GAEN identifier, keeps the key cache bounded; a
    /// phone heard all along keeps its visit (its key is registered again when the cache lets go).
    @Test func aFloodOfTargetsKeepsTheKeyCacheBounded() throws {
        var (p, store) = try pipeline()
        let phone = Self.target(1)
        var most = 0
        for n in 0..<50_000 {
            let time = 10 + Double(n) / 200  // 200 new targets a second for 250 s
            var rpi = [UInt8](repeating: 0, count: 16)
            withUnsafeBytes(of: UInt64(n).littleEndian) { rpi.replaceSubrange(0..<8, with: $0) }
            p.handle(.measure(Self.target(UInt64(n) + 2), rssi: -70, payload: SensorPayload(kind: .gaen, bytes: rpi), time: time), wallOffset: offset)
            if n % 200 == 0 { p.handle(.measure(phone, rssi: -60, payload: Self.herald(1), time: time), wallOffset: offset) }
            most = max(most, p.cachedKeys)
        }
        #expect(most <= DiaryPipeline.maximumCachedKeys)
        _ = try p.close(now: 270 + offset)
        let visits = try store.visits().filter { $0.kind == .herald }
        #expect(visits.count == 1 && visits.first?.checkIn == 10 + offset)
    }
}
