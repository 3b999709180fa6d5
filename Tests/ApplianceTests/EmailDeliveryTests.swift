import Foundation
import Testing
@testable import Appliance

/// Email through the real chain: ExportDelivery → outbox → msmtp (sendmail interface) → SMTP →
/// aiosmtpd's Maildir, then the delivered message parsed.
@Suite struct EmailDeliveryTests {
    func settings(_ dir: TemporaryDirectory, sendmail: String) throws -> ExportSettings {
        try Settings.parse(SettingsTests.minimal + """

            [export]
            email = "tracers@example.org"
            from = "venue@example.org"
            sendmail = "\(sendmail)"
            outbox = "\(dir.file("outbox"))"
            retry_seconds = 60
            """, file: "test.toml").export
    }

    @Test func deliveredMessageCarriesTheCSVByteForByte() async throws {
        let dir = TemporaryDirectory("email")
        let port = SMTPSink.freePort()
        let sink = SMTPSink(port: port, maildir: dir.file("maildir"))
        try sink.start()
        defer { sink.stop() }

        let delivery = ExportDelivery(settings: try settings(dir, sendmail: try msmtpSendmail(in: dir, port: port)))
        let document = Fixture.document(visitsBeforeSync: 1)
        let result = await delivery.deliver(document, to: .email, now: Date())
        #expect(result.delivered, "\(result)")

        let messages = sink.messages()
        try #require(messages.count == 1)
        let message = ParsedMessage(messages[0])
        #expect(message.header("To") == "tracers@example.org")
        #expect(message.header("X-RcptTo") == "tracers@example.org")  // msmtp took the recipient from To (-t)
        #expect(result.description.contains(try #require(message.header("Message-ID"))))
        let parts = message.parts
        try #require(parts.count == 2)
        #expect(parts[1].parameter("Content-Disposition", "filename") == document.fileName)
        #expect(parts[1].decodedBody == document.csv)
        let body = String(decoding: parts[0].decodedBody ?? Data(), as: UTF8.self)
        #expect(body.contains("Visits:    2"))
        #expect(body.contains("1 visit was recorded before the clock was synchronised"))
        #expect(try await delivery.outbox.entries().isEmpty)
    }

    @Test func whileTheServerIsDownTheEmailWaitsAndLandsLaterExactlyOnce() async throws {
        let dir = TemporaryDirectory("email")
        let port = SMTPSink.freePort()
        let sink = SMTPSink(port: port, maildir: dir.file("maildir"))
        let delivery = ExportDelivery(settings: try settings(dir, sendmail: try msmtpSendmail(in: dir, port: port)))
        let t0 = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded())  // retry times are whole seconds

        // Nothing listens: msmtp fails, the message stays in the outbox.
        let result = await delivery.deliver(Fixture.document(), to: .email, now: t0)
        guard case .queued(let text) = result else {
            Issue.record("expected the email to be queued, got \(result)")
            return
        }
        #expect(text.contains("exited with status"))
        let waiting = try await delivery.outbox.entries()
        #expect(waiting.count == 1)

        try sink.start()
        defer { sink.stop() }
        var report = await delivery.retryDue(now: t0 + 59)
        #expect(report.delivered.isEmpty && sink.messages().isEmpty)  // not due yet
        report = await delivery.retryDue(now: t0 + 60)
        #expect(report.delivered == [waiting[0].messageID], "\(report.failed.map { $0.lastError ?? "" })")
        report = await delivery.retryDue(now: t0 + 100_000)
        #expect(report.delivered.isEmpty)

        let messages = sink.messages()
        try #require(messages.count == 1)
        #expect(ParsedMessage(messages[0]).header("Message-ID") == waiting[0].messageID)
        #expect(ParsedMessage(messages[0]).parts.last?.decodedBody == Fixture.csv)
    }
}
