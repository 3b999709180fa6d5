import BLEHost
import Foundation

/// Where an export goes.
public enum DeliveryTarget: String, Sendable, CaseIterable, Equatable {
    /// To `export.email` through sendmail, via the outbox.
    case email
    /// Into `export.directory` (a USB stick).
    case directory
}

/// What became of one delivery, in words for the CLI and the log.
public enum DeliveryResult: Sendable, Equatable, CustomStringConvertible {
    /// Done: emailed (accepted by sendmail) or written.
    case delivered(String)
    /// The email waits in the outbox and will be retried.
    case queued(String)
    /// Not delivered and not queued: a configuration or directory problem to fix.
    case failed(String)

    public var delivered: Bool { if case .delivered = self { return true } else { return false } }

    public var description: String {
        switch self {
        case .delivered(let text), .queued(let text), .failed(let text): return text
        }
    }
}

/// The one delivery path, shared by `venue-beacon export --deliver`, the GPIO button and the
/// service's outbox retries.
public final class ExportDelivery: Sendable {
    public let settings: ExportSettings
    public let outbox: Outbox
    private let timeZone: TimeZone

    /// `recordingDays` is the diary's retention (nil: forever): an email waiting in the outbox
    /// is dropped when the first visit it carries would have been purged from the diary.
    /// `transport` defaults to the configured sendmail; tests may pass another.
    public init(settings: ExportSettings, recordingDays: Int?, transport: (any MailTransport)? = nil, timeZone: TimeZone = .current) {
        self.settings = settings
        self.timeZone = timeZone
        self.outbox = Outbox(
            directory: settings.outbox, transport: transport ?? SendmailTransport(program: settings.sendmail),
            policy: RetryPolicy(first: TimeInterval(settings.retrySeconds), maximum: TimeInterval(settings.retryMaxSeconds)),
            retention: recordingDays.map { TimeInterval($0) * 86_400 })
    }

    /// The delivery `settings` configure, with the diary's retention for the outbox.
    public convenience init(settings: Settings, transport: (any MailTransport)? = nil) {
        self.init(settings: settings.export, recordingDays: settings.diary.recordingDays, transport: transport)
    }

    /// The targets the config enables: what the button delivers to.
    public var configuredTargets: [DeliveryTarget] {
        var targets: [DeliveryTarget] = []
        if !settings.recipients.isEmpty { targets.append(.email) }
        if settings.directory != nil { targets.append(.directory) }
        return targets
    }

    /// Says why `target` cannot work right now (no address configured; the directory missing,
    /// unmounted, read-only or not writable), before any export is made; nil = go ahead.
    /// An email can always be queued, so only its configuration is checked.
    public func preflight(_ target: DeliveryTarget) async -> String? {
        switch target {
        case .email:
            if settings.recipients.isEmpty { return Self.noRecipients }
            return settings.refusesPlaintextEmail ? ExportSettings.plaintextRefused : nil
        case .directory:
            guard let directory = settings.directory else { return DirectoryDeliveryError.notConfigured.description }
            let writer = DirectoryDelivery(directory: directory, requireMount: settings.requireMount)
            return await withCheckedContinuation { continuation in
                DispatchQueue(label: "venue-beacon.directory-check").async {
                    do throws(DirectoryDeliveryError) {
                        try writer.check()
                        continuation.resume(returning: nil)
                    } catch {
                        continuation.resume(returning: error.description)
                    }
                }
            }
        }
    }

    static let noRecipients = "no email address is configured: set export.email to the contact tracers' address"

    public func deliver(_ document: ExportDocument, to target: DeliveryTarget, now: Date) async -> DeliveryResult {
        switch target {
        case .email: return await email(document, now: now)
        case .directory: return await writeToDirectory(document)
        }
    }

    /// Retries queued emails that are due. The service calls this periodically.
    public func retryDue(now: Date) async -> RetryReport {
        await outbox.retryDue(now: now)
    }

    private func email(_ document: ExportDocument, now: Date) async -> DeliveryResult {
        let recipients = settings.recipients
        guard !recipients.isEmpty else {
            return .failed(Self.noRecipients)
        }
        guard !settings.refusesPlaintextEmail || document.sealed else {
            return .failed(ExportSettings.plaintextRefused)
        }
        if let tooLarge = Self.tooLargeToEmail(document, maxMB: settings.maxEmailMB) {
            return .failed(tooLarge)
        }
        let messageID = ExportEmail.newMessageID(for: document, from: settings.from)
        // "=_" cannot occur in base64 or quoted-printable text, so the boundary never collides.
        let boundary = "=_venue-beacon_" + Hex.encode((0..<12).map { _ in UInt8.random(in: 0...255) })
        let email = ExportEmail(
            document: document, from: settings.from, to: recipients, date: now, timeZone: timeZone, messageID: messageID,
            boundary: boundary)
        let to = recipients.joined(separator: ", ")
        switch await outbox.send(email, now: now, earliestVisitEnd: document.earliestVisitEnd) {
        case .delivered(let id):
            return .delivered(
                "emailed \(document.fileName)\(document.signature == nil ? "" : " and its signature") (\(document.visits) visits) to \(to), Message-ID \(id)")
        case .queued(let id, let reason, let next):
            return .queued(
                "the email to \(to) was not accepted (\(reason)); it is kept in the outbox \(settings.outbox) "
                    + "as \(id) and retried from \(UTCDate.readable(next)) until delivered")
        case .notStored(let reason):
            return .failed(reason)
        }
    }

    /// Why `document` cannot be emailed under `max_email_mb`, and what to do instead; nil: it fits.
    static func tooLargeToEmail(_ document: ExportDocument, maxMB: Int) -> String? {
        let bytes = ExportEmail.attachmentBytes(document)
        guard bytes > maxMB * 1_000_000 else { return nil }
        let size = String(format: "%.1f", Double(bytes) / 1_000_000)
        return "the export of \(document.visits) visits would make an email of over \(size) MB, more than export.max_email_mb "
            + "(\(maxMB) MB) and more than mail servers take: deliver it to a USB stick (export.directory, "
            + "`venue-beacon export --deliver directory`), or email fewer days (`venue-beacon export --deliver email --days N`)"
    }

    private func writeToDirectory(_ document: ExportDocument) async -> DeliveryResult {
        guard let directory = settings.directory else { return .failed(DirectoryDeliveryError.notConfigured.description) }
        let writer = DirectoryDelivery(directory: directory, requireMount: settings.requireMount)
        let content = document.content, name = document.fileName, visits = document.visits
        let signature = document.signature, signatureName = document.signatureFileName
        return await withCheckedContinuation { continuation in
            // fsync on a USB stick blocks for a while: a queue of its own, not the shared pool.
            DispatchQueue(label: "venue-beacon.directory-delivery").async {
                do throws(DirectoryDeliveryError) {
                    let path = try writer.write(content, named: name)
                    var text = "wrote \(path) (\(visits) visits)"
                    if let signature {
                        text += " and its signature \(try writer.write(Data(signature.utf8), named: signatureName))"
                    }
                    continuation.resume(returning: .delivered(text))
                } catch {
                    continuation.resume(returning: .failed(error.description))
                }
            }
        }
    }
}
