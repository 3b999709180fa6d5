import BLEHost
import Foundation
import Glibc

/// `venue-beacon doctor --send-test`: a short email with no visit data, handed to the same
/// sendmail program, the same way (``SendmailTransport``), as the exports; never queued in the
/// outbox, so a failure is said at once and nothing is retried later.
public enum TestEmail {
    /// The message, as `sendmail -t -i` takes it.
    public static func message(settings: Settings, date: Date, hostName: String = ProcessInfo.processInfo.hostName) -> String {
        let venue = settings.venue
        let export = settings.export
        var random = SystemRandomNumberGenerator()
        let nonce = Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255, using: &random) })
        let domain = export.from.split(separator: "@").last.map(String.init) ?? "localhost"
        let body = """
            This is a test email from the venue-beacon node of \(venue.name) (venue code \(venue.code)), \
            sent by venue-beacon doctor --send-test on \(hostName) at \(UTCDate.readable(date)).

            It carries no visit data. The exports will come from the same address, through the same \
            mail account, \(export.ageRecipients.isEmpty ? "unsealed" : "sealed to \(export.ageRecipients.count) age recipient(s)").
            """
        return [
            "From: " + MIMEText.phrase(venue.name) + " <\(export.from)>",
            "To: " + export.recipients.joined(separator: ",\n "),
            "Subject: " + MIMEText.unstructured("venue-beacon test email from \(venue.name) (\(venue.code))"),
            "Date: " + RFC5322Date.format(date, timeZone: .current),
            "Message-ID: <venue-beacon-test.\(venue.code).\(Int(date.timeIntervalSince1970)).\(nonce)@\(domain)>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
            "",
            MIMEText.quotedPrintable(body),
            "",
        ].joined(separator: "\n")
    }

    /// Sends it: nil when sendmail took it, else why not.
    public static func send(settings: Settings, date: Date = Date(), temporaryDirectory: String = NSTemporaryDirectory()) -> String? {
        guard !settings.export.recipients.isEmpty else { return ExportDelivery.noRecipients }
        let path = (temporaryDirectory as NSString).appendingPathComponent("venue-beacon-test-\(getpid()).eml")
        do throws(FileSystemError) {
            try InstalledFile.write(Array(message(settings: settings, date: date).utf8), to: path, access: .init(mode: 0o600, group: nil))
        } catch {
            return "cannot write the test message: \(error)"
        }
        defer { unlink(path) }
        do throws(HandOffError) {
            try SendmailTransport(program: settings.export.sendmail).handOff(messageAt: path)
            return nil
        } catch {
            return error.description
        }
    }
}
