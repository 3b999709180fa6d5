import Foundation
import Herald
import Testing
import VenueDiary
import VenueNode

@testable import Simulation

/// Days and nights of a venue through the node as `run` ships it: opening hours kept by the
/// radio loop, visits closed at closing, retention at recording_days on the loop's own cadence.
@Suite struct MultiDayRunTests {
    /// Two days open 09:00–10:00, six visitors a day, recording_days = 1. (Two, not three: each
    /// virtual second of a night is a tick of both loops, about 45 µs in a debug build, so a day
    /// costs about 4 s of CPU; two keep the test well within its time on a busy machine.)
    @Test func twoDaysKeepEveryVisitUntilRetentionDeletesIt() throws {
        let path = NSTemporaryDirectory() + "multi-day-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let hours = Schedule(days: Array(repeating: [OpeningRange(start: 9 * 60, end: 10 * 60)], count: 7))
        let days = DaySchedule(schedule: hours, days: 2)
        let venue = MultiDayVenue.generate(
            days: days, venue: VenueConfiguration(visitors: 6, seed: 4, walkPasts: 1, fixedDevices: 1), regularShare: 0.5)
        #expect(venue.regularsByDay[1] > 0)
        let store = try DiaryStore(path: path)
        var run = try MultiDayRun(venue: venue, setup: NodeSetup(diary: DiarySettings(recordingDays: 1)), store: store, diaryPath: path)

        var opened: [Double] = []
        var closed: [Double] = []
        var open = run.run.loop.isOpen
        #expect(!open)  // midnight: the node starts closed
        for _ in 0..<2 {
            _ = try run.runDay(step: 60) { r in
                guard r.loop.isOpen != open else { return }
                open = r.loop.isOpen
                if open { opened.append(r.now) } else { closed.append(r.now) }
            }
        }
        run.finish()
        let report = run.report
        // The loop opened and closed at each day's 09:00:00 and 10:00:00, to the second.
        let opening: [Double] = [32_400, 86_400 + 32_400]
        let closing: [Double] = [36_000, 86_400 + 36_000]
        #expect(opened == opening)
        #expect(closed == closing)

        for day in report.days {
            #expect(day.recall == 1, "day \(day.day)")
            #expect(day.splitVisits == 0 && day.phantomVisits == 0, "day \(day.day)")
            #expect(day.eligibleVisits > 0)
            #expect(day.expiredVisitsInDiary == 0)
        }
        #expect(report.days.map(\.date) == ["2026-06-01", "2026-06-02"])
        // Each day's end is the next midnight. At the first, nothing is a day old; by the second
        // the first day's visits (closed by 10:00) are, and retention (hourly) has deleted them.
        let (d1, d2) = (report.days[0], report.days[1])
        #expect(d1.purgedVisits == 0)
        #expect(d1.diaryVisits > 0 && d2.diaryVisits > 0)
        #expect(d2.purgedVisits == d1.diaryVisits)
        // The purged visits' identities are gone from the file's bytes too (secure_delete), but
        // for the regulars', whose payloads the second day's visits hold again.
        #expect(d2.purgedPayloadsInFile == 0)
        #expect((d2.oldestVisitDays ?? 2) < 1)
        // At the end only the second day's visits remain, all closed at or before closing.
        let left = try store.visits()
        #expect(left.count == d2.diaryVisits)
        let second = days.origin + 86_400
        #expect(left.allSatisfy { $0.checkIn >= second + 9 * 3600 && ($0.checkOut ?? .infinity) <= second + 10 * 3600 })
        #expect(report.overall.splitVisits == 0 && report.overall.phantomVisits == 0 && report.overall.recall == 1)
        #expect(run.run.counters.restarts == 0)
        // Nothing of the days' phones is kept through the night: the node's tables are empty and
        // the air keeps no phone's GATT server (memory flat over many days).
        #expect(run.run.driver.node.targetCount == 0 && run.run.pipeline.cachedKeys == 0)
        #expect(run.run.air.databases.isEmpty)
        #expect(run.run.reads.isEmpty)
        #expect(d2.diaryBytes > 0)
    }

    /// The air's advert-data cache keeps devices in range only, once it holds 1,024 (a run of
    /// many days hears thousands of devices, a few at a time).
    @Test func theAirForgetsTheAdvertDataOfDevicesGone() {
        let phones = (0..<1100).map { AirTests.phone($0, .heraldAndroid, from: Double($0), to: Double($0) + 0.5) }
        var air = Air(truth: AirTests.truth(phones))
        for id in phones.indices {
            _ = air.advance(until: Double(id) + 0.25)
            let data = air.advertisingData(id, epoch: 0)
            #expect(data == phones[id].advertisingData(epoch: 0))
        }
        // The sweep at 1,024 kept only the device in range then; 76 more came since.
        #expect(air.advertDataHeld.count == 77)
        #expect(air.advertData.compactMap { $0 }.count == 77)
        #expect(air.advertDataSweepAt == 1024)
    }

    /// The secure-delete check finds a payload anywhere in the file or its write-ahead log.
    @Test func purgedPayloadsAreFoundInTheFileOrItsLog() throws {
        let path = NSTemporaryDirectory() + "payload-scan-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var random = SimulationRandom(seed: 1)
        let noise = (0..<5000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let herald = TestPayload.make(identifier: 1234)
        let rpi: [UInt8] = (0..<16).map { UInt8($0 * 7 + 1) }
        let absent = TestPayload.make(identifier: 1235)
        try Data(noise + herald + noise).write(to: URL(fileURLWithPath: path))
        #expect(MultiDayRun.occurrences(of: [herald, absent], inFilesAt: path) == 1)
        #expect(MultiDayRun.occurrences(of: [rpi, absent], inFilesAt: path) == 0)
        try Data(noise + rpi).write(to: URL(fileURLWithPath: path + "-wal"))
        #expect(MultiDayRun.occurrences(of: [herald, rpi, absent], inFilesAt: path) == 2)
        #expect(MultiDayRun.occurrences(of: [], inFilesAt: path) == 0)
    }
}
