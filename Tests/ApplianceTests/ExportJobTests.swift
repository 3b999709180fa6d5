import Foundation
import Synchronization
import Testing
@testable import Appliance

/// Records what the export LED was told.
final class IndicatorLog: ExportIndicator {
    let events = Mutex<[String]>([])
    func exportStarted() { events.withLock { $0.append("started") } }
    func exportFinished(success: Bool) { events.withLock { $0.append(success ? "succeeded" : "failed") } }
}

/// Holds an export until the test opens it.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Mutex(false)
    func pass() {
        entered.withLock { $0 = true }
        semaphore.wait()
    }
    var isEntered: Bool { entered.withLock { $0 } }
    func open() { semaphore.signal() }
}

@Suite struct ExportJobTests {
    func settings(_ dir: TemporaryDirectory, export: String) throws -> Settings {
        try Settings.parse(SettingsTests.minimal + "\n[export]\noutbox = \"\(dir.file("outbox"))\"\n" + export, file: "t")
    }

    @Test func pressesDuringAnExportAreIgnored() async throws {
        let dir = TemporaryDirectory("job")
        try FileManager.default.createDirectory(atPath: dir.file("usb"), withIntermediateDirectories: true)
        let settings = try settings(dir, export: "directory = \"\(dir.file("usb"))\"\nrequire_mount = false\n")
        let gate = Gate()
        let log = IndicatorLog()
        let job = ExportJob(
            settings: settings, delivery: ExportDelivery(settings: settings), indicator: log,
            makeDocument: { _ in
                gate.pass()
                return Fixture.document()
            })

        // A task, not `async let`: with one in this function, Swift 6.0.3's compiler crashes on
        // the Mutex it reads (log.events).
        let first = Task { await job.runIfIdle() }
        while !gate.isEntered { try await Task.sleep(for: .milliseconds(5)) }
        // The first export is inside the diary read: a second press is ignored at once.
        let second = await job.runIfIdle()
        #expect(second == nil)
        gate.open()
        let run = try #require(await first.value)
        #expect(run.succeeded)
        #expect(run.results.map(\.target) == [.directory])
        #expect(FileManager.default.contents(atPath: dir.file("usb/\(Fixture.document().fileName)")) == Fixture.csv)
        #expect(log.events.withLock { $0 } == ["started", "succeeded"])

        // Idle again: the next press runs.
        gate.open()
        #expect(await job.runIfIdle() != nil)
    }

    @Test func nothingConfiguredOrAFailedTargetShowsAsFailure() async throws {
        let dir = TemporaryDirectory("job")
        let log = IndicatorLog()
        let none = try settings(dir, export: "")
        let idle = ExportJob(settings: none, delivery: ExportDelivery(settings: none), indicator: log, makeDocument: { _ in Fixture.document() })
        let run = try #require(await idle.runIfIdle())
        #expect(run.problem?.contains("set export.email and/or export.directory") == true)

        let missing = try settings(dir, export: "directory = \"\(dir.file("nowhere"))\"\n")
        let job = ExportJob(settings: missing, delivery: ExportDelivery(settings: missing), indicator: log, makeDocument: { _ in Fixture.document() })
        let failed = try #require(await job.runIfIdle())
        #expect(!failed.succeeded)
        #expect(failed.results.first?.result.description.contains("does not exist") == true)
        #expect(log.events.withLock { $0 } == ["started", "failed", "started", "failed"])
    }

    /// The button and the schedule never email a plaintext export unless export.plaintext says so.
    @Test func plaintextEmailIsRefusedWithoutRecipients() async throws {
        let dir = TemporaryDirectory("job")
        let settings = try settings(dir, export: "email = \"t@example.org\"\nsendmail = \"/bin/true\"\n")
        let job = ExportJob(
            settings: settings, delivery: ExportDelivery(settings: settings), indicator: nil, makeDocument: { _ in Fixture.document() })
        let run = try #require(await job.runIfIdle())
        #expect(!run.succeeded)
        #expect(run.results.first?.result == .failed(ExportSettings.plaintextRefused))
        #expect(dir.names(in: "outbox").isEmpty)
    }

    /// An export too large for mail servers is refused at once, saying what to do, and never
    /// queued (it would be retried for days); the USB stick still gets it.
    @Test func anExportTooLargeToEmailIsRefusedAndTheStickStillGetsIt() async throws {
        let dir = TemporaryDirectory("job")
        try FileManager.default.createDirectory(atPath: dir.file("usb"), withIntermediateDirectories: true)
        let settings = try settings(
            dir,
            export: "email = \"t@example.org\"\nsendmail = \"\(dir.script("sendmail", "cat >/dev/null"))\"\nplaintext = true\nmax_email_mb = 1\n"
                + "directory = \"\(dir.file("usb"))\"\nrequire_mount = false\n")
        // 740,000 bytes are 1,012,634 on the wire (base64 in lines of 76 and CRLF): over 1 MB.
        let large = Fixture.document(csv: Data(repeating: UInt8(ascii: "a"), count: 740_000))
        #expect(ExportEmail.attachmentBytes(large) == 1_012_634)
        #expect(ExportEmail.attachmentBytes(Fixture.document(csv: Data(count: 57))) == 78)
        let job = ExportJob(settings: settings, delivery: ExportDelivery(settings: settings), indicator: nil, makeDocument: { _ in large })
        let run = try #require(await job.runIfIdle())
        #expect(!run.succeeded)
        let email = try #require(run.results.first { $0.target == .email }?.result)
        guard case .failed(let reason) = email else {
            Issue.record("the email was not refused: \(email)")
            return
        }
        #expect(reason.contains("over 1.0 MB, more than export.max_email_mb (1 MB)"), "\(reason)")
        #expect(reason.contains("--deliver directory"))
        #expect(dir.names(in: "outbox").isEmpty)
        #expect(run.results.first { $0.target == .directory }?.result.delivered == true)

        // Under the limit the same email is queued for sendmail as usual.
        let small = ExportJob(
            settings: settings, delivery: ExportDelivery(settings: settings), indicator: nil,
            makeDocument: { _ in Fixture.document(csv: Data(repeating: UInt8(ascii: "a"), count: 700_000)) })
        let smallRun = try #require(await small.runIfIdle())
        #expect(smallRun.succeeded)
    }

    /// The running service writes its diary before the document is made (``DiaryFlusher``).
    @Test func theDiaryIsFlushedBeforeTheDocumentIsMade() async throws {
        let dir = TemporaryDirectory("job")
        try FileManager.default.createDirectory(atPath: dir.file("usb"), withIntermediateDirectories: true)
        let settings = try settings(dir, export: "directory = \"\(dir.file("usb"))\"\nrequire_mount = false\n")
        let order = Mutex<[String]>([])
        let job = ExportJob(
            settings: settings, delivery: ExportDelivery(settings: settings), indicator: nil,
            makeDocument: { _ in
                order.withLock { $0.append("document") }
                return Fixture.document()
            },
            prepare: { order.withLock { $0.append("flush") } })
        let run = try #require(await job.runIfIdle())
        #expect(run.succeeded)
        #expect(order.withLock { $0 } == ["flush", "document"])
        // Without a running service the flusher returns at once.
        await DiaryFlusher().flush()
    }

    @Test func aDiaryErrorIsReported() async throws {
        let dir = TemporaryDirectory("job")
        let s = try settings(dir, export: "email = \"t@example.org\"\n")
        struct Broken: Error {}
        let job = ExportJob(settings: s, delivery: ExportDelivery(settings: s), indicator: nil, makeDocument: { _ in throw Broken() })
        let run = try #require(await job.runIfIdle())
        #expect(run.problem?.hasPrefix("the export failed") == true)
        #expect(!run.succeeded)
    }
}
