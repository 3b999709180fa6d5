import ArgumentParser
import Foundation
import Simulation
import VenueDiary
import VenueNode

/// `simulate --days N`: the venue over N days and nights through the same node (``MultiDayRun``),
/// with the config's opening hours and retention, judged day by day.
extension SimulateCommand {
    static let daysHelp = ArgumentHelp(
        "Simulate this many venue days (1 to \(DaySchedule.maximumDays)), nights and retention included.",
        discussion: """
            Each day has the --config file's [schedule] opening hours (09:00-17:00 every day without one; the \
            simulated venue's local time is UTC) and --visitors people arriving and leaving within them, about \
            30 % of them regulars from earlier days. At closing the node stops advertising and scanning and \
            closes open visits; at night it idles; its diary purges visits older than the config's \
            recording_days on its own hourly cadence. Each day is judged against the diary as it stands at the \
            day's end. --hours is not used.
            """,
        valueName: "n")

    static let faultsHelp = ArgumentHelp(
        "With --days: inject faults on a schedule drawn from --seed.",
        discussion: """
            Each open day one fault while open, in turn: the Bluetooth controller lost for 5-90 s (the host \
            reopens it with its backoff), the wall clock stepped forwards by up to 3 h and back 5-30 min later \
            (the diary holds its time on the steady clock), a power cut of 20-120 s (the node restarts from its \
            diary: open visits resumed or closed at their last sighting); every third night a power cut after \
            which the node starts with its clock up to an hour slow and unsynchronised until before the next \
            opening. The report says what each did.
            """)

    /// `--days`'s checks, from `validate()`.
    func validateDays(_ days: Int) throws {
        guard (1...DaySchedule.maximumDays).contains(days) else {
            throw ValidationError("--days \(days): expected 1 to \(DaySchedule.maximumDays)")
        }
        if heraldLogs != nil { throw ValidationError("--herald-logs is not available with --days yet") }
    }

    func runDays(_ count: Int) async throws {
        let (setup, schedule) = try daysSetup()
        let days = DaySchedule(schedule: schedule, days: count)
        let venue = MultiDayVenue.generate(
            days: days,
            venue: VenueConfiguration(
                visitors: visitors, seed: seed, checkInSeconds: setup.diary.checkInSeconds, checkOutSeconds: setup.diary.checkOutSeconds))
        let directory = URL(fileURLWithPath: dataDirectory)
        let diaryPath = directory.appendingPathComponent("simulated-diary.sqlite").path
        let store = try freshSimulatedDiary(diaryPath, in: directory, named: dataDirectory)
        var run = try MultiDayRun(
            venue: venue, setup: setup, store: store, diaryPath: diaryPath, faults: faults ? FaultSchedule(seed: seed, days: days) : nil)
        let pacer = Pacer(pacing: Pacing(speed) ?? .unpaced, startVirtual: 0, startWall: .now)
        let started = ContinuousClock.now
        while run.nextDay < count {
            let end = run.end(ofDay: run.nextDay)
            while run.run.now < end {
                run.advance(until: min(end, run.run.now + 60))
                let wait = pacer.delay(untilVirtual: run.run.now, wallNow: .now)
                if wait > .zero { try await Task.sleep(for: wait) }
            }
            let day = try reportingFailures { try run.endDay() }
            let wall = (ContinuousClock.now - started).components
            Console.status(
                "day \(day.day) of \(count) (\(day.date)): recall \(String(format: "%.1f", day.recall * 100)) %, "
                    + "\(day.diaryVisits) visits in the diary, \(day.purgedVisits) purged"
                    + (day.faults.isEmpty ? "" : ", \(day.faults.count) faults") + "; \(wall.seconds) s\n")
        }
        run.finish()
        let report = run.report
        try reportingFailures {
            let line = try report.json()
            try Data((line + "\n").utf8).write(to: directory.appendingPathComponent("efficacy.json"))
        }
        Console.out(report.text)
        Console.out("  diary \(diaryPath)")
        if json { Console.out(try report.json()) }
    }

    /// The node to simulate and its opening hours: the config file's, or the defaults.
    private func daysSetup() throws -> (NodeSetup, Schedule?) {
        guard let config else { return (NodeSetup(), nil) }
        var options = ConfigOptions()
        options.config = config
        let settings = try options.load()
        return (settings.nodeSetup, settings.schedule)
    }
}
