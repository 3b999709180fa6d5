import BLEHost
import Foundation
import Herald
import Testing
import VenueDiary
@testable import VenueNode

/// The node's two loops (``NodeLoop`` and ``DiaryKeeper``) driven as the service drives them, on a
/// manual clock and a real SQLite diary, through a venue's day: closed at start, opening, a
/// visit before the clock is synchronised, the clock's step, a controller loss, a host that stops
/// answering, closing time, and retention the next day. The shell here is the test: it answers
/// every host request at once and carries the notices.
@Suite final class NodeLoopTests {
    let directory: URL
    var loop: NodeLoop
    var keeper: DiaryKeeper
    let store: DiaryStore
    /// Monday 2026-11-23 07:00:00 UTC; steady time counts from it.
    static let base = 1_795_417_200.0
    var steady = 0.0
    /// How far the wall clock is behind the true time (a Pi without RTC before NTP).
    var wallBehind = 1800.0
    var synchronised = false
    var hostAnswers = true
    var notices: [NodeLoop.Notice] = []
    var diaryNotices: [DiaryKeeper.Notice] = []
    /// Every request the loop made, as text, and those not answered yet.
    var requests: [String] = []
    var unanswered: [HostRequestID] = []

    static let gaenPhone = BluetoothAddress(rawValue: 0x4A_11_22_33_44_55)
    static let rpi: [UInt8] = Array(0x10..<0x20)

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("node-loop-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try DiaryStore(path: directory.appendingPathComponent("diary.sqlite").path)
        // Open 08:00–16:00 UTC every day.
        let hours = Schedule(days: Array(repeating: [OpeningRange(start: 8 * 60, end: 16 * 60)], count: 7), timeZone: TimeZone(identifier: "UTC")!)
        loop = NodeLoop(
            driver: NodeDriver(node: SensorNode(), classifier: try AdvertClassifier()), schedule: hours,
            wall: Self.base - wallBehind, deviceName: "hci0", venueName: "The Swan")
        let settings = DiarySettings(checkInSeconds: 120, checkOutSeconds: 300, recordingDays: 1)
        keeper = try DiaryKeeper(
            store: store, path: "diary.sqlite", settings: settings, steady: 0, wall: Self.base - wallBehind, synchronised: false,
            boot: .init(bootID: "boot-1", wallMinusBoot: Self.base - wallBehind - 20), notices: &diaryNotices)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var wall: Double { Self.base + steady - (synchronised ? 0 : wallBehind) }

    // MARK: The shell

    func feed(_ input: NodeLoop.Input) {
        var out = NodeLoop.Output()
        loop.handle(input, now: steady, into: &out)
        carry(&out)
    }

    func carry(_ out: inout NodeLoop.Output) {
        while !out.isEmpty {
            let (events, requests, notices) = (out.events, out.requests, out.notices)
            out.removeAll()
            keeper.record(events, steady: steady, wall: wall)
            self.notices += notices
            if notices.contains(.checkOutAll) { keeper.checkOutAll(steady: steady, into: &diaryNotices) }
            self.requests += requests.map { "\($0.request)" }
            unanswered += requests.map(\.id)
            // Switching the radio and probes are all this node asks of a host here (the phone
            // only advertises): `.done` answers either.
            guard hostAnswers else { continue }
            for id in unanswered { loop.handle(.reply(id, .success(.done)), now: steady, into: &out) }
            unanswered.removeAll()
        }
    }

    /// Ticks every `step` seconds until steady time `end`; a GAEN phone advertises every 2 s
    /// while `phonePresent` says so.
    func run(until end: Double, step: Double = 1, phonePresent: (Double) -> Bool = { _ in false }) throws {
        while steady < end {
            if phonePresent(steady) {
                feed(.host(.advertisingReport(LEAdvertisingReport(
                    eventType: .nonConnectableUndirected, addressType: .random, address: Self.gaenPhone,
                    data: ([0x02, 0x01, 0x1A, 0x03, 0x03, 0x6F, 0xFD, 0x17, 0x16, 0x6F, 0xFD] + Self.rpi + [0x40, 0x08, 0x00, 0x00])[...],
                    rawRSSI: -60))))
            }
            steady += step
            feed(.tick(NodeLoop.Tick(wall: wall, presentPhones: keeper.openVisits)))
            try keeper.tick(steady: steady, wall: wall, synchronisation: {
                self.synchronised ? .init(bootID: "boot-1", wallMinusBoot: self.wall - (self.steady + 20)) : nil
            }, into: &diaryNotices)
        }
    }

    func logged(_ fragment: String) -> Bool {
        notices.contains { if case .log(let line) = $0 { line.text.contains(fragment) } else { false } }
            || diaryNotices.contains { if case .log(let line) = $0 { line.text.contains(fragment) } else { false } }
    }

    var watchdogFeeds: Int { notices.filter { $0 == .watchdog }.count }

    func radioStarts() {
        feed(.host(.state(.opening("hci0"))))
        feed(.host(.state(.ready)))
    }

    // MARK: The day

    @Test func aVenueDayOnAManualClock() throws {
        // 07:00 true, 06:30 on the unsynchronised clock: closed; ready once the controller is.
        var out = NodeLoop.Output()
        loop.start(into: &out)
        carry(&out)
        #expect(!loop.isOpen)
        #expect(logged("opening hours: closed until") && logged("08:00; not advertising or scanning"))
        #expect(notices.contains(.open(false)) && !notices.contains(.open(true)))
        radioStarts()
        feed(.host(.radio(RadioState(advertising: false, scanning: false))))
        #expect(notices.filter { $0 == .ready }.count == 1)

        // 08:00 on the wall clock (08:30 true): open, the radio is switched on.
        try run(until: 5400)
        #expect(loop.isOpen)
        #expect(notices.filter { if case .open = $0 { true } else { false } } == [.open(false), .open(true)])
        #expect(requests.contains("setRadio(advertising: true, scanning: true)"))
        #expect(logged("opening hours: open until") && logged("16:00; advertising and scanning"))
        feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        #expect(notices.contains(.radio(.running)))
        #expect(notices.filter { $0 == .ready }.count == 1)  // once

        // A GAEN phone from 08:31 (true) checks in on the unsynchronised clock.
        try run(until: 6000, phonePresent: { $0 >= 5460 })
        #expect(keeper.openVisits == 1)
        try run(until: 5460 + 600, phonePresent: { _ in true })
        keeper.flush(steady: steady, into: &diaryNotices)
        let before = try #require(store.visits().first)
        #expect(before.checkIn == Self.base + 5460 - wallBehind, "at its first sighting, on the clock of the time")

        // NTP: the wall clock steps 30 min forward; the visit moves with it, stays one visit.
        synchronised = true
        try run(until: 6600, phonePresent: { _ in true })
        #expect(logged("the system clock is synchronised; it stepped +1800 s; corrected the times of 1 visits recorded before"))
        keeper.flush(steady: steady, into: &diaryNotices)
        let corrected = try store.visits()
        #expect(corrected.count == 1)
        #expect(corrected.first?.checkIn == before.checkIn + 1800)

        // The controller is lost and comes back: told as such, and the watchdog is fed throughout.
        let fed = watchdogFeeds
        feed(.host(.state(.recovering("hardware error 0x01"))))
        #expect(notices.last == .radio(.unavailable("hardware error 0x01")))
        #expect(logged("Bluetooth: unavailable: hardware error 0x01; retrying with backoff"))
        try run(until: 6610)
        #expect(watchdogFeeds == fed + 10)
        radioStarts()
        feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        #expect(notices.last == .radio(.running))
        #expect(logged("Bluetooth: advertising \"The Swan\" and scanning on hci0"))

        // A host that stops answering (no events, probes unanswered) starves the watchdog.
        hostAnswers = false
        let fedBeforeStall = watchdogFeeds
        try run(until: 6640)
        #expect(logged("the host has not answered for 20 s; the watchdog is no longer fed"))
        #expect(watchdogFeeds < fedBeforeStall + 30)
        let stalledAt = watchdogFeeds
        try run(until: 6650)
        #expect(watchdogFeeds == stalledAt, "no feeds while stalled")
        hostAnswers = true
        try run(until: 6660, phonePresent: { _ in true })
        #expect(logged("Bluetooth: the host answers again"))
        #expect(watchdogFeeds > stalledAt)

        // 16:00: closing time. The radio goes off and the open visit closes at its last sighting.
        #expect(!notices.contains(.checkOutAll))
        try run(until: 9 * 3600 - 1, phonePresent: { _ in true })
        #expect(loop.isOpen && keeper.openVisits == 1)
        try run(until: 9 * 3600 + 60)
        #expect(!loop.isOpen)
        #expect(notices.contains(.checkOutAll))
        #expect(notices.filter { if case .open = $0 { true } else { false } } == [.open(false), .open(true), .open(false)])
        #expect(requests.last { $0.hasPrefix("setRadio") } == "setRadio(advertising: false, scanning: false)")
        #expect(keeper.openVisits == 0)
        let closed = try #require(try store.visits().first)
        #expect(closed.checkOut == closed.lastSeen)
        #expect(closed.lastSeen == Self.base + 9 * 3600 - 2)
        #expect(closed.checkIn == before.checkIn + 1800)

        // Retention (one day): the visit goes once its check-out is a day old, not before.
        try run(until: 9 * 3600 + 86_400 - 3600, step: 60)
        #expect(try store.visits().count == 1)
        try run(until: 9 * 3600 + 86_400 + 3600, step: 60)
        #expect(try store.visits().isEmpty)
        #expect(logged("retention: deleted 1 visits older than 1 days"))
    }

    /// A node whose controller cannot be opened (none fitted, or broken) is up all the same: ready
    /// at the first failure (systemd neither times out its start nor restarts it in a loop), its
    /// watchdog fed while it retries, its status saying why; and when a controller comes, it
    /// runs without a second "ready".
    @Test func aNodeWithoutAControllerIsUpAndSaysWhy() throws {
        loop = NodeLoop(
            driver: NodeDriver(node: SensorNode(), classifier: try AdvertClassifier()), wall: Self.base, deviceName: "hci0",
            venueName: "The Swan")
        feed(.host(.state(.opening("hci0"))))
        #expect(!notices.contains(.ready))
        feed(.host(.state(.unavailable("no such device"))))
        #expect(notices.filter { $0 == .ready }.count == 1)
        #expect(notices.contains(.radio(.unavailable("no such device"))))
        try run(until: 60)
        #expect(watchdogFeeds == 60)
        #expect(notices.contains { if case .status(let line) = $0 { line.hasPrefix("Bluetooth unavailable: no such device; 0 phones present") } else { false } })
        // Retries: opening again is still "unavailable" until the radio runs.
        feed(.host(.state(.opening("hci0"))))
        feed(.host(.state(.unavailable("no such device"))))
        radioStarts()
        feed(.host(.radio(RadioState(advertising: true, scanning: true))))
        #expect(notices.last { if case .radio = $0 { true } else { false } } == .radio(.running))
        #expect(notices.filter { $0 == .ready }.count == 1)
    }
}
