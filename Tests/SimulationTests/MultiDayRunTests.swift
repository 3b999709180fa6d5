import Foundation
import Herald
import Testing
import VenueDiary
import VenueNode

@testable import Simulation

/// Days and nights of a venue through the node as `run` ships it: opening hours kept by the
/// radio loop, visits closed at closing, retention at recording_days on the loop's own cadence.
@Suite struct MultiDayRunTests {
    /// Three days open 09:00–11:00, six visitors a day, recording_days = 1, faults on: the
    /// controller lost on day 1, a night's power cut with the clock slow and unsynchronised
    /// after it, the clock stepped and back on day 2, a power cut on day 3. (Three days, not
    /// more: each virtual second of a night is a tick of both loops, about 45 µs in a debug
    /// build, so a day costs about 4 s of CPU.)
    @Test func threeDaysWithFaultsKeepEveryVisitUntilRetentionDeletesIt() throws {
        let path = NSTemporaryDirectory() + "multi-day-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let hours = Schedule(days: Array(repeating: [OpeningRange(start: 9 * 60, end: 11 * 60)], count: 7))
        let days = DaySchedule(schedule: hours, days: 3)
        let venue = MultiDayVenue.generate(
            days: days, venue: VenueConfiguration(visitors: 6, seed: 4, walkPasts: 1, fixedDevices: 1), regularShare: 0.5)
        #expect(venue.regularsByDay[1] > 0)
        let faults = FaultSchedule(seed: 4, days: days)
        let kinds = faults.faults.map { fault -> String in
            switch fault {
            case .controllerLost: "controller"
            case .clockStep: "clock"
            case .powerCut: "power"
            case .unsynchronisedStart: "night"
            }
        }
        #expect(kinds == ["controller", "night", "clock", "power"])
        let store = try DiaryStore(path: path)
        var run = try MultiDayRun(
            venue: venue, setup: NodeSetup(diary: DiarySettings(recordingDays: 1)), store: store, diaryPath: path, faults: faults)

        var opened: [Double] = []
        var closed: [Double] = []
        var open = run.run.loop.isOpen
        #expect(!open)  // midnight: the node starts closed
        for _ in 0..<3 {
            _ = try run.runDay(step: 60) { r in
                guard r.loop.isOpen != open else { return }
                open = r.loop.isOpen
                if open { opened.append(r.now) } else { closed.append(r.now) }
            }
        }
        run.finish()
        let report = run.report
        // The loop opened and closed at each day's 09:00:00 and 11:00:00, to the second: the
        // clock's step kept within the opening, the slow clock synchronised before it.
        let midnights: [Double] = [0, 86_400, 2 * 86_400]
        let opening = midnights.map { $0 + 9 * 3600 }
        let closing = midnights.map { $0 + 11 * 3600 }
        #expect(opened == opening)
        #expect(closed == closing)

        for day in report.days {
            #expect(day.recall == 1, "day \(day.day)")
            #expect(day.splitVisits == 0 && day.phantomVisits == 0, "day \(day.day)")
            #expect(day.eligibleVisits > 0)
            #expect(day.expiredVisitsInDiary == 0)
        }
        #expect(report.days.map(\.date) == ["2026-06-01", "2026-06-02", "2026-06-03"])
        // Every fault is over and reported on the day it ended.
        let outcomes = report.days.flatMap(\.faults)
        #expect(outcomes.map(\.kind) == [.controllerLost, .unsynchronisedStart, .clockStep, .powerCut])
        #expect(outcomes.allSatisfy { $0.over != nil })
        #expect(report.days[0].faults.first?.kind == .controllerLost)
        #expect(report.days[2].faults.last?.kind == .powerCut)
        #expect(report.overall.faults == ["controller_lost": 1, "unsynchronised_start": 1, "clock_step": 1, "power_cut": 1])
        #expect(report.venue.faults)
        let (lost, night, step, cut) = (outcomes[0], outcomes[1], outcomes[2], outcomes[3])
        #expect((lost.reopenAttempts ?? 0) >= 1)
        // At night nothing is open: nothing to resume, nothing recorded before the sync.
        #expect(night.openVisits == 0 && night.resumedVisits == 0 && night.closedVisits == 0)
        #expect(night.log.contains { $0.hasPrefix("the system clock is synchronised; it stepped +") })
        #expect(step.log.contains { $0.contains("the system clock is back after") })
        // A short cut: every open visit on disk resumed, none closed.
        #expect(cut.closedVisits == 0)
        #expect((cut.resumedVisits ?? 0) <= cut.openVisits)
        // Each day's end is the next midnight. At the first, nothing is a day old; later the
        // day before's visits (closed by 11:00) are, and retention (hourly) has deleted them.
        let (d1, d2, d3) = (report.days[0], report.days[1], report.days[2])
        #expect(d1.purgedVisits == 0)
        #expect(d1.diaryVisits > 0 && d2.diaryVisits > 0 && d3.diaryVisits > 0)
        #expect(d2.purgedVisits == d1.diaryVisits)
        #expect(d3.purgedVisits == d2.diaryVisits)
        // The purged visits' identities are gone from the file's bytes too (secure_delete), but
        // for the regulars', whose payloads the next day's visits hold again.
        #expect(d2.purgedPayloadsInFile == 0 && d3.purgedPayloadsInFile == 0)
        #expect((d3.oldestVisitDays ?? 2) < 1)
        // At the end only the third day's visits remain, all closed at or before closing.
        let left = try run.run.store.visits()
        #expect(left.count == d3.diaryVisits)
        let third = days.origin + 2 * 86_400
        #expect(left.allSatisfy { $0.checkIn >= third + 9 * 3600 && ($0.checkOut ?? .infinity) <= third + 11 * 3600 })
        #expect(report.overall.splitVisits == 0 && report.overall.phantomVisits == 0 && report.overall.recall == 1)
        #expect(run.run.counters.restarts == 0)
        // Nothing of the days' phones is kept through the night: the node's tables are empty and
        // the air keeps no phone's GATT server (memory flat over many days).
        #expect(run.run.driver.node.targetCount == 0 && run.run.pipeline.cachedKeys == 0)
        #expect(run.run.air.databases.isEmpty)
        #expect(run.run.air.payloadWrites.values.allSatisfy { $0.allSatisfy { $0 >= days.days[2].end } })
        #expect(run.run.reads.isEmpty)
        #expect(d3.diaryBytes > 0)
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

    /// Once a day is judged, the air forgets the payload writes before its end (judging a day
    /// needs that day's only; a year of them grew with every writer that ever came).
    @Test func theAirForgetsPayloadWritesOfDaysJudged() {
        var air = Air(truth: AirTests.truth([AirTests.phone(0, .heraldAndroid, from: 0, to: 1)]))
        air.payloadWrites = [3: [10, 20, 86_410], 4: [30], 5: [86_400, 90_000]]
        air.forgetPayloadWrites(before: 86_400)
        #expect(air.payloadWrites == [3: [86_410], 5: [86_400, 90_000]])
        air.forgetPayloadWrites(before: 172_800)
        #expect(air.payloadWrites.isEmpty)
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
