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

    public static let defaultSendmail = "/usr/sbin/sendmail"
    static var defaultFrom: String { "venue-beacon@\(ProcessInfo.processInfo.hostName)" }

    /// The addresses in `email`.
    public var recipients: [String] {
        email.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func isAddress(_ text: some StringProtocol) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix(".")
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
        s.finish()
        return ExportSettings(email: email.trimmingCharacters(in: .whitespaces), from: from, sendmail: sendmail, directory: directory)
    }

    var toml: String {
        tomlSection("export", [
            ("email", TOMLText.quote(email), ""),
            ("from", TOMLText.quote(from), ""),
            ("sendmail", TOMLText.quote(sendmail), ""),
            ("directory", directory.map(TOMLText.quote), "exports cannot be delivered to a directory"),
        ])
    }
}
