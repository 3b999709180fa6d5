import Foundation

/// `[export]`: where exports of the diary go.
public struct ExportSettings: Sendable, Equatable {
    /// The contact tracers' address(es), comma-separated; empty = no email delivery.
    public var email: String
    /// The sender address of export emails.
    public var from: String
    /// The sendmail-compatible program that takes the message (msmtp on the image).
    public var sendmail: String
    /// A directory (a USB stick mount) that exports can be written to.
    public var directory: String?
    /// Refuse a `directory` that is not a mount point: with the USB stick unplugged, the empty
    /// mount directory on the SD card would otherwise silently receive the export.
    public var requireMount: Bool
    /// Where emails wait until sendmail has accepted them (in the service's state directory).
    public var outbox: String
    /// Seconds before the first retry of a failed hand-off; each further failure doubles it.
    public var retrySeconds: Int
    /// The longest wait between retries.
    public var retryMaxSeconds: Int
    /// `max_email_mb`: the largest export email, in MB (10⁶ bytes) as it goes on the wire. Mail
    /// servers refuse larger messages (25 MB is a common limit, base64 included); a larger
    /// export is refused at once with what to do instead, rather than retried for days.
    public var maxEmailMB: Int = defaultMaxEmailMB
    /// `recipients`: the contact tracers' age X25519 public keys. With any, every export leaving
    /// the node is sealed to all of them.
    public var ageRecipients: [AgeRecipient] = []
    /// `plaintext = true`: emailing unsealed exports is allowed (without recipients it is refused).
    public var plaintext: Bool = false
    /// `schedule`: when the service exports and delivers on its own; nil: never.
    public var schedule: ExportSchedule?
    /// `signing_key`: the node's Ed25519 key, created at first use (state directory, 0600).
    public var signingKey: String = defaultSigningKey

    public static let defaultSigningKey = "/var/lib/venue-beacon/node-signing.key"
    public static let defaultMaxEmailMB = 20

    /// Where the scheduled export remembers the last time it ran for: beside the signing key,
    /// in the state directory.
    public var scheduleState: String {
        ((signingKey as NSString).deletingLastPathComponent as NSString).appendingPathComponent("scheduled-export.state")
    }

    /// An email would carry the diary in plaintext and that was not explicitly allowed.
    public var refusesPlaintextEmail: Bool { ageRecipients.isEmpty && !plaintext }

    public static let plaintextRefused = "refusing to email the diary unencrypted: set export.recipients to the contact tracers' "
        + "age public keys (age1…, from age-keygen; see docs/export.md), or export.plaintext = true to send it in the clear"

    /// Warnings for `config check`.
    var notes: [String] {
        var notes: [String] = []
        if ageRecipients.isEmpty && (!recipients.isEmpty || directory != nil || schedule != nil) {
            notes.append(
                plaintext
                    ? "export.recipients is empty and export.plaintext = true: exports leave the node unencrypted"
                    : "export.recipients is empty: emailed exports are refused (set recipients, or plaintext = true); "
                        + "exports to a directory are unencrypted")
        }
        if schedule != nil && recipients.isEmpty && directory == nil {
            notes.append("export.schedule is set but neither export.email nor export.directory: the schedule delivers nothing")
        }
        return notes
    }

    public static let defaultSendmail = "/usr/sbin/sendmail"
    public static let defaultOutbox = "/var/lib/venue-beacon/outbox"
    static var defaultFrom: String { "venue-beacon@\(ProcessInfo.processInfo.hostName)" }

    /// The addresses in `email`.
    public var recipients: [String] {
        email.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func isAddress(_ text: some StringProtocol) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !parts[1].hasPrefix("."), !parts[1].hasSuffix(".")
        else { return false }
        return !text.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" || $0 == ";" })
    }

    static func read(_ section: ConfigSection) -> ExportSettings {
        var s = section
        let email = s.string("email", default: "") { value in
            let list = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if value.trimmingCharacters(in: .whitespaces).isEmpty { return nil }
            return list.allSatisfy(isAddress) ? nil : "must be an email address such as \"tracing@example.org\" (several separated by commas), or \"\" for none"
        } ?? ""
        let from = s.string("from", default: defaultFrom) { isAddress($0) ? nil : "must be an email address such as \"venue@example.org\"" } ?? defaultFrom
        let sendmail = s.string("sendmail", default: defaultSendmail) { $0.hasPrefix("/") ? nil : "must be an absolute path such as \"/usr/sbin/sendmail\"" } ?? defaultSendmail
        let directory = s.string("directory", default: nil) { $0.hasPrefix("/") ? nil : "must be an absolute path such as \"/media/usb\"" }
        let requireMount = s.bool("require_mount", default: true)
        let outbox = s.string("outbox", default: defaultOutbox) { $0.hasPrefix("/") ? nil : "must be an absolute path such as \"\(defaultOutbox)\"" } ?? defaultOutbox
        let retry = s.int("retry_seconds", default: 60, range: 1...86_400, unit: "seconds") ?? 60
        let retryMax = s.int("retry_max_seconds", default: 3600, range: 1...86_400, unit: "seconds") ?? 3600
        let ageRecipients = s.strings("recipients") { text in
            switch AgeRecipient.parse(text) {
            case .success: return nil
            case .failure(let problem): return problem.description
            }
        }.compactMap { try? AgeRecipient.parse($0).get() }
        let plaintext = s.bool("plaintext", default: false)
        let maxEmailMB = s.int("max_email_mb", default: defaultMaxEmailMB, range: 1...1000, unit: "MB") ?? defaultMaxEmailMB
        var schedule: ExportSchedule?
        _ = s.string("schedule", default: nil) { text in
            switch ExportSchedule.parse(text) {
            case .success(let parsed):
                schedule = parsed
                return nil
            case .failure(let problem):
                return problem.text
            }
        }
        let signingKey = s.string("signing_key", default: defaultSigningKey) {
            $0.hasPrefix("/") ? nil : "must be an absolute path such as \"\(defaultSigningKey)\""
        } ?? defaultSigningKey
        if retryMax < retry {
            s.report("retry_max_seconds", value: String(retryMax), problem: "must be at least retry_seconds (\(retry))")
        }
        s.finish()
        return ExportSettings(
            email: email.trimmingCharacters(in: .whitespaces), from: from, sendmail: sendmail, directory: directory,
            requireMount: requireMount, outbox: outbox, retrySeconds: retry, retryMaxSeconds: max(retry, retryMax),
            maxEmailMB: maxEmailMB, ageRecipients: ageRecipients, plaintext: plaintext, schedule: schedule, signingKey: signingKey)
    }

    var toml: String {
        tomlSection("export", [
            ("email", TOMLText.quote(email), ""),
            ("from", TOMLText.quote(from), ""),
            ("sendmail", TOMLText.quote(sendmail), ""),
            ("directory", directory.map(TOMLText.quote), "exports cannot be delivered to a directory"),
            ("require_mount", String(requireMount), ""),
            ("outbox", TOMLText.quote(outbox), ""),
            ("retry_seconds", String(retrySeconds), ""),
            ("retry_max_seconds", String(retryMaxSeconds), ""),
            ("recipients", "[" + ageRecipients.map { TOMLText.quote($0.description) }.joined(separator: ", ") + "]", ""),
            ("plaintext", String(plaintext), ""),
            ("max_email_mb", String(maxEmailMB), ""),
            ("schedule", schedule.map { TOMLText.quote($0.description) }, "no scheduled export"),
            ("signing_key", TOMLText.quote(signingKey), ""),
        ])
    }
}
