import BLEHost
import Foundation
import Herald
import Logging
import Sightings
import Synchronization
import Testing
import VenueDiary
@testable import Appliance

/// The recorder: the shell that runs the diary loop (`DiaryKeeper`) on a thread of its own, with
/// a real diary file, on a manual clock. What the keeper decides is tested in VenueNodeTests;
/// these test what only the shell does: its queue from the radio thread (and what it drops when
/// the thread falls behind), closing time, flushes before an export, stopping, and a diary that
/// cannot be opened.
@Suite struct RecorderTests {
    /// Steady seconds that move only when a test moves them; the wall clock is `origin` later.
    final class ManualTime: Sendable {
        static let origin = 1_780_000_000.0
        private let seconds = Mutex(0.0)

        var now: Double { seconds.withLock { $0 } }
        func set(_ value: Double) { seconds.withLock { $0 = value } }

        var clock: NodeClock {
            NodeClock(
                monotonic: { self.now }, wall: { Self.origin + self.now },
                boot: { BootTime(seconds: self.now, bootID: "recorder-tests") })
        }
    }

    /// What the hooks and the log heard from the recorder's thread.
    final class Heard: Sendable {
        private let state = Mutex<(changes: [VisitChange], lines: [String])>(([], []))

        var changes: [VisitChange] { state.withLock { $0.changes } }
        var lines: [String] { state.withLock { $0.lines } }

        var hooks: ServiceHooks { ServiceHooks(visits: { changes in self.state.withLock { $0.changes += changes } }) }

        var logger: Logger {
            Logger(label: "recorder-tests") { _ in Handler(heard: self) }
        }

        func log(_ line: String) { state.withLock { $0.lines.append(line) } }

        struct Handler: LogHandler {
            let heard: Heard
            var metadata: Logger.Metadata = [:]
            var logLevel: Logger.Level = .trace
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) { heard.log(event.message.description) }
        }
    }

    let directory = TemporaryDirectory("recorder")
    let time = ManualTime()
    let heard = Heard()

    func recorder(path: String? = nil, queueCapacity: Int = Recorder.capacity) -> Recorder {
        Recorder(
            options: Recorder.Options(
                diaryPath: path ?? directory.file("diary.sqlite"),
                diarySettings: DiarySettings(checkInSeconds: 120, checkOutSeconds: 300, recordingDays: 31),
                flushPolicy: .live, heraldLogs: nil, queueCapacity: queueCapacity),
            clock: time.clock, hooks: heard.hooks, logger: heard.logger)
    }

    static func phone(_ n: Int32) -> (Target, SensorPayload) {
        let target = Target(id: TargetID(rawValue: UInt64(n)), address: BluetoothAddress(rawValue: 0xC0_0000_0000 + UInt64(n)), addressType: .random)
        return (target, SensorPayload(kind: .herald, bytes: TestPayload.make(identifier: n)))
    }

    /// A phone heard every 10 s from `from` through `to` (steady seconds).
    static func sightings(of n: Int32, from: Double, through to: Double) -> [SensorEvent] {
        let (target, payload) = phone(n)
        return stride(from: from, through: to, by: 10).map { .measure(target, rssi: -60, payload: payload, time: $0) }
    }

    func visitsInFile() throws -> [Visit] {
        try DiaryStore(path: directory.file("diary.sqlite"), readOnly: true).visits()
    }

    /// Starts `run()` in a task; the task's value is what `run()` threw, if anything.
    func start(_ recorder: Recorder) -> Task<(any Error)?, Never> {
        Task {
            do {
                try await recorder.run()
                return nil
            } catch {
                return error
            }
        }
    }

    /// Starts `run()` and waits until the diary is open: the thread ticks a second of steady
    /// time after that, so a test moves the clock only from then on.
    func started(_ recorder: Recorder) async -> Task<(any Error)?, Never> {
        let running = start(recorder)
        #expect(await eventually { heard.lines.contains { $0.hasPrefix("diary ") && $0.hasSuffix(" open") } })
        return running
    }

    /// A running recorder with one phone heard from 0 through 200 s and checked in at 200 s.
    func oneVisitCheckedIn() async -> (Recorder, running: Task<(any Error)?, Never>) {
        let recorder = recorder()
        let running = await started(recorder)
        recorder.submit(Self.sightings(of: 1, from: 0, through: 200))
        time.set(200)
        // Checked in at a tick once it lasted over 120 s.
        #expect(await eventually { recorder.present == 1 && heard.changes.map(\.event) == [.checkedIn] })
        return (recorder, running)
    }

    @Test func aCheckInIsCommittedByAFlushBeforeTheBatchIsDue() async throws {
        let (recorder, running) = await oneVisitCheckedIn()
        // The live policy commits check-ins within 120 s, not at once.
        #expect(try visitsInFile().isEmpty)
        // An export asks for everything now.
        await recorder.flush()
        let visit = try #require(try visitsInFile().first)
        #expect(visit.checkIn == ManualTime.origin)
        #expect(visit.lastSeen == ManualTime.origin + 200)
        #expect(visit.checkOut == nil)
        recorder.stop()
        #expect(await running.value == nil)
    }

    @Test func aFullQueueDropsItsOldestHalfAndSaysSo() async throws {
        let recorder = recorder(queueCapacity: 8)
        // The thread is not running yet: it has fallen behind by everything submitted.
        for n in Int32(1)...8 { recorder.submit(Self.sightings(of: n, from: Double(n), through: Double(n))) }
        for n in Int32(9)...12 { recorder.submit(Self.sightings(of: n, from: Double(n), through: Double(n))) }
        let running = await started(recorder)
        #expect(await eventually { heard.lines.contains("the diary fell behind: 4 sensor events dropped") })
        // Every phone is seen again: an identity is tracked from its second sighting (the
        // diary's admission under a flood), its visit from the first. The newest first
        // sightings were kept: phones 5 to 12 are present, 1 to 4 (first sightings dropped)
        // are seen once only and never are.
        for n in Int32(1)...12 { recorder.submit(Self.sightings(of: n, from: 20, through: 20)) }
        // Recorded before the clock moves on: on a busy machine the thread could otherwise tick
        // at 400 first, forget the first sightings (older than check_out by then) and take these
        // for first sightings again.
        await recorder.flush()
        time.set(20)
        // Seen twice in 20 s, they leave as walk-pasts after the check-out limit.
        time.set(400)
        #expect(await eventually { heard.changes.count == 8 })
        #expect(heard.changes.allSatisfy { $0.event == .walkPast })
        let kept = Set(heard.changes.map(\.visit.payload))
        #expect(kept == Set((Int32(5)...12).map { Self.phone($0).1.bytes }))
        recorder.stop()
        #expect(await running.value == nil)
    }

    @Test func closingTimeClosesOpenVisitsAtTheirLastSighting() async throws {
        let (recorder, running) = await oneVisitCheckedIn()
        time.set(210)
        recorder.checkOutAll()
        #expect(await eventually { heard.changes.map(\.event) == [.checkedIn, .checkedOut] })
        #expect(heard.changes.last?.visit.checkOut == ManualTime.origin + 200)
        #expect(await eventually { recorder.present == 0 })
        // Closed visits are written at once, not with the next batch.
        #expect(try visitsInFile().first?.checkOut == ManualTime.origin + 200)
        recorder.stop()
        #expect(await running.value == nil)
    }

    @Test func stopWritesWhatItHoldsAndLaterCallsReturnAtOnce() async throws {
        let (recorder, running) = await oneVisitCheckedIn()
        recorder.stop()
        #expect(await running.value == nil)
        // The open visit is in the file, still open: the next start resumes it.
        let visit = try #require(try visitsInFile().first)
        #expect(visit.checkOut == nil && visit.lastSeen == ManualTime.origin + 200)
        #expect(heard.lines.contains { $0.hasPrefix("diary closed; 1 open visits continue") })
        // An export after the stop does not wait for a thread that is gone; events are ignored.
        await recorder.flush()
        recorder.submit(Self.sightings(of: 2, from: 210, through: 400))
    }

    @Test func aFileThatIsNotADiaryFailsTheRunAndExportsDoNotWait() async throws {
        let path = directory.file("notes.txt")
        try Data(String(repeating: "not a diary\n", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        let recorder = recorder(path: path)
        let error = await start(recorder).value
        #expect(error is DiaryError)
        await recorder.flush()
        // Left as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(String(repeating: "not a diary\n", count: 100).utf8))
    }
}
