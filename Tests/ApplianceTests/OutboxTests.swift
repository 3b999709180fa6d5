import Foundation
import Synchronization
import Testing
@testable import Appliance

/// A mail system that refuses while `down` and records every message it accepted.
final class FakeMailSystem: MailTransport {
    private let state = Mutex<(down: Bool, attempts: Int, accepted: [Data])>((false, 0, []))

    init(down: Bool = false) { state.withLock { $0.down = down } }

    func setDown(_ down: Bool) { state.withLock { $0.down = down } }
    var attempts: Int { state.withLock { $0.attempts } }
    var accepted: [Data] { state.withLock { $0.accepted } }

    func handOff(messageAt path: String) throws(HandOffError) {
        let data = FileManager.default.contents(atPath: path) ?? Data()
        let down = state.withLock { s in
            s.attempts += 1
            if !s.down { s.accepted.append(data) }
            return s.down
        }
        if down { throw HandOffError("connection refused") }
    }
}

@Suite struct OutboxTests {
    let t0 = Date(timeIntervalSince1970: 1_768_435_200)

    func email(_ id: String = "<m1@example.org>") -> ExportEmail {
        ExportEmail(document: Fixture.document(), from: "venue@example.org", to: ["t@example.org"], date: t0, messageID: id, boundary: "=_b")
    }

    @Test func backoffDoublesUpToTheMaximum() {
        let policy = RetryPolicy(first: 60, maximum: 3600)
        #expect((1...8).map { policy.delay(afterFailures: $0) } == [60, 120, 240, 480, 960, 1920, 3600, 3600])
        #expect(policy.delay(afterFailures: 10_000) == 3600)
    }

    @Test func deliveredAtOnceLeavesNothingBehind() async throws {
        let dir = TemporaryDirectory("outbox")
        let mail = FakeMailSystem()
        let outbox = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 60, maximum: 3600))
        let outcome = await outbox.send(email(), now: t0)
        #expect(outcome == .delivered(messageID: "<m1@example.org>"))
        #expect(mail.accepted == [email().bytes])
        #expect(dir.names(in: "outbox") == [".lock"])
    }

    /// A hand-off that takes long (a sendmail waiting on a server) fails: the next attempt counts
    /// from its end, so it is never reported as already past.
    @Test func theNextAttemptCountsFromTheEndOfAFailedHandOff() async throws {
        /// Fails after 2 s, noting when it gave up (the test's own await may return much later
        /// on a busy machine, so the end is taken here).
        final class SlowFailingMail: MailTransport {
            let ended = Mutex<Date?>(nil)
            func handOff(messageAt path: String) throws(HandOffError) {
                Thread.sleep(forTimeInterval: 2)
                ended.withLock { $0 = Date() }
                throw HandOffError("timed out talking to the server")
            }
        }
        let dir = TemporaryDirectory("outbox")
        let mail = SlowFailingMail()
        let outbox = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 1, maximum: 3600))
        let outcome = await outbox.send(email(), now: Date())
        guard case .queued(_, _, let next) = outcome, let ended = mail.ended.withLock({ $0 }) else {
            Issue.record("expected the email to be queued: \(outcome)")
            return
        }
        #expect(next > ended, "next attempt \(next) is before the hand-off ended at \(ended)")
    }

    /// While another process holds the outbox (handing an email to a slow sendmail), reading
    /// does not wait, and a writer says what it waits for before it waits.
    @Test func readingNeverWaitsAndAWriterSaysWhatItWaitsFor() async throws {
        let dir = TemporaryDirectory("outbox")
        let outbox = Outbox(directory: dir.file("outbox"), transport: FakeMailSystem(down: true), policy: RetryPolicy(first: 60, maximum: 3600))
        _ = await outbox.send(email(), now: t0)
        // Another process's hold: flock on an open file of its own.
        let other = open(dir.file("outbox/.lock"), O_RDWR | O_CLOEXEC)
        try #require(other >= 0 && flock(other, LOCK_EX) == 0)
        #expect(try await outbox.entries().map(\.messageID) == ["<m1@example.org>"])

        let notices = Mutex<[String]>([])
        let drop = Task { try await outbox.drop(id: "none", waiting: { text in notices.withLock { $0.append(text) } }) }
        #expect(await eventually { !notices.withLock { $0 }.isEmpty })
        #expect(notices.withLock { $0 } == [
            "waiting for the outbox \(dir.file("outbox")): another process (the service, or another venue-beacon command) is handing an email to sendmail, which is stopped after at most 5 minutes"
        ])
        close(other)
        #expect(try await drop.value == nil)
    }

    /// `diary purge` on a machine without the state directory (any but the appliance): an
    /// outbox that was never made holds nothing to purge, is not an error, and is not made.
    @Test func purgingAnOutboxThatIsNotThereIsNothing() async throws {
        let dir = TemporaryDirectory("outbox")
        let outbox = Outbox(directory: dir.file("missing/outbox"), transport: FakeMailSystem(), policy: RetryPolicy(first: 60, maximum: 3600))
        #expect(try await outbox.purge(now: t0).isEmpty)
        #expect(dir.names().isEmpty)
    }

    @Test func failedHandOffIsKeptAndRetriedWithBackoffUntilDeliveredOnce() async throws {
        let dir = TemporaryDirectory("outbox")
        let mail = FakeMailSystem(down: true)
        let outbox = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 60, maximum: 3600))

        let outcome = await outbox.send(email(), now: t0)
        #expect(outcome == .queued(messageID: "<m1@example.org>", reason: "connection refused", nextAttempt: t0 + 60))
        let stored = try await outbox.entries()
        #expect(stored.count == 1)
        #expect(stored.first?.attempts == 1)
        #expect(stored.first?.messageID == "<m1@example.org>")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("outbox/\(stored[0].id).eml"))) == email().bytes)

        // Not due yet: nothing is tried.
        var report = await outbox.retryDue(now: t0 + 59)
        #expect(mail.attempts == 1)
        #expect(report.waiting == 1 && report.nextDue == t0 + 60)

        // Due, still down: the wait doubles.
        report = await outbox.retryDue(now: t0 + 60)
        #expect(mail.attempts == 2)
        #expect(report.failed.map(\.attempts) == [2])
        #expect(report.nextDue == t0 + 60 + 120)

        // A new Outbox on the same directory (a restart) sees the same state.
        let restarted = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 60, maximum: 3600))
        #expect(try await restarted.entries().map(\.nextAttempt) == [t0 + 180])

        mail.setDown(false)
        report = await restarted.retryDue(now: t0 + 180)
        #expect(report.delivered == ["<m1@example.org>"])
        #expect(report.waiting == 0 && report.nextDue == nil)
        #expect(mail.accepted == [email().bytes])  // the same bytes, so the same Message-ID

        report = await restarted.retryDue(now: t0 + 10_000, force: true)
        #expect(report.delivered.isEmpty)
        #expect(mail.accepted.count == 1)  // exactly once
        #expect(dir.names(in: "outbox") == [".lock"])
    }

    /// The next attempt read back from the state file must be exactly the one reported.
    @Test func reportedNextAttemptIsDueExactlyThenAfterARestart() async throws {
        let dir = TemporaryDirectory("outbox")
        let mail = FakeMailSystem(down: true)
        let outbox = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 60, maximum: 60))
        guard case .queued(_, _, let next) = await outbox.send(email(), now: t0 + 0.123_456_7) else {
            Issue.record("expected queued")
            return
        }
        let restarted = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 60, maximum: 60))
        #expect(try await restarted.entries().map(\.nextAttempt) == [next])
        #expect(await restarted.retryDue(now: next - 0.001).failed.isEmpty)
        #expect(await restarted.retryDue(now: next).failed.count == 1)
    }

    @Test func forceRetriesEverythingNowInOrder() async throws {
        let dir = TemporaryDirectory("outbox")
        let mail = FakeMailSystem(down: true)
        let outbox = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 600, maximum: 600))
        _ = await outbox.send(email("<a@x.org>"), now: t0)
        _ = await outbox.send(email("<b@x.org>"), now: t0 + 1)
        mail.setDown(false)
        let report = await outbox.retryDue(now: t0 + 2, force: true)
        #expect(report.delivered == ["<a@x.org>", "<b@x.org>"])
    }

    @Test func leftoversOfACrashAreHandled() async throws {
        let dir = TemporaryDirectory("outbox")
        let box = dir.file("outbox")
        try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: true)
        // Stored but never tried (crash before the first hand-off): due at once.
        try email("<crash@x.org>").bytes.write(to: URL(fileURLWithPath: box + "/20260115T000000Z-1.eml"))
        // A torn temporary file and a state file whose message was already delivered.
        try Data("partial".utf8).write(to: URL(fileURLWithPath: box + "/.20260115T000001Z-2.eml.tmp-99-1"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: box + "/20260115T000002Z-3.state"))

        let mail = FakeMailSystem()
        let outbox = Outbox(directory: box, transport: mail, policy: RetryPolicy(first: 60, maximum: 60))
        let report = await outbox.retryDue(now: t0)
        #expect(report.delivered == ["<crash@x.org>"])
        #expect(mail.accepted.count == 1)
        #expect(dir.names(in: "outbox") == [".lock"])
    }

    @Test func unwritableOutboxIsReportedNotSilentlyDropped() async {
        let outbox = Outbox(directory: "/proc/venue-beacon-outbox", transport: FakeMailSystem(), policy: RetryPolicy(first: 1, maximum: 1))
        let outcome = await outbox.send(email(), now: t0)
        guard case .notStored(let reason) = outcome else {
            Issue.record("expected notStored, got \(outcome)")
            return
        }
        #expect(reason.contains("/proc/venue-beacon-outbox"))
    }
}

/// Retention: a waiting message never outlives the first visit it carries.
@Suite struct OutboxRetentionTests {
    let t0 = Date(timeIntervalSince1970: 1_768_435_200)
    let day: TimeInterval = 86_400

    func email(_ id: String) -> ExportEmail {
        ExportEmail(document: Fixture.document(), from: "venue@example.org", to: ["t@example.org"], date: t0, messageID: id, boundary: "=_b")
    }

    @Test func aWaitingEmailIsDroppedUndeliveredWhenItsFirstVisitPassesRetention() async throws {
        let dir = TemporaryDirectory("outbox")
        let mail = FakeMailSystem(down: true)
        let outbox = Outbox(directory: dir.file("outbox"), transport: mail, policy: RetryPolicy(first: 60, maximum: 60), retention: 31 * day)
        // Visits ending 10 and 2 days before it was queued.
        _ = await outbox.send(email("<old@x>"), now: t0, earliestVisitEnd: t0 - 10 * day)
        _ = await outbox.send(email("<new@x>"), now: t0, earliestVisitEnd: t0 - 2 * day)
        #expect(try await outbox.purge(now: t0 + 20 * day).isEmpty)

        mail.setDown(false)
        let report = await outbox.retryDue(now: t0 + 21 * day + 1)
        #expect(report.expired.map(\.messageID) == ["<old@x>"])
        #expect(report.delivered == ["<new@x>"])
        #expect(mail.accepted.count == 1, "an expired email was handed to sendmail")
        #expect(dir.names(in: "outbox") == [".lock"])
    }

    @Test func retentionZeroKeepsNothingAndForeverKeepsEverything() async throws {
        let dir = TemporaryDirectory("outbox")
        let none = Outbox(directory: dir.file("a"), transport: FakeMailSystem(down: true), policy: RetryPolicy(first: 60, maximum: 60), retention: 0)
        _ = await none.send(email("<a@x>"), now: t0, earliestVisitEnd: nil)
        #expect(try await none.purge(now: t0).map(\.messageID) == ["<a@x>"])
        let forever = Outbox(directory: dir.file("b"), transport: FakeMailSystem(down: true), policy: RetryPolicy(first: 60, maximum: 60))
        _ = await forever.send(email("<b@x>"), now: t0, earliestVisitEnd: t0 - 1000 * day)
        #expect(try await forever.purge(now: t0 + 1000 * day).isEmpty)
    }

    @Test func messagesQueuedWithoutAVisitEndCountFromWhenTheyWereQueued() async throws {
        #expect(Outbox.queuedAt("20260115T100000Z-1a2b3c4d") == Date(timeIntervalSince1970: 1_768_471_200))
        #expect(Outbox.queuedAt("garbage") == nil)
    }

    @Test func theStateAndMessageFilesArePrivate() async throws {
        let dir = TemporaryDirectory("outbox")
        let outbox = Outbox(directory: dir.file("outbox"), transport: FakeMailSystem(down: true), policy: RetryPolicy(first: 60, maximum: 60))
        let old = umask(0o022)
        defer { umask(old) }
        _ = await outbox.send(email("<p@x>"), now: t0, earliestVisitEnd: t0)
        for name in dir.names(in: "outbox") where name != ".lock" {
            var info = stat()
            #expect(stat(dir.file("outbox") + "/" + name, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "\(name)")
        }
    }
}
