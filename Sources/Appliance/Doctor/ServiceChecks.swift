import Foundation
import Glibc
import VenueNode

/// The service's half of the checklist: the diary, delivery, the outbox, opening hours, the
/// hub, the config on the card.
enum ServiceChecks {
    /// What the doctor measured of the diary.
    struct DiaryFacts: Sendable, Equatable {
        var path: String
        /// The directory exists and this process may write in it.
        var directoryProblem: String?
        /// Database and write-ahead log, 0 when there is no diary yet.
        var fileBytes: Int64
        /// Free on the diary's file system, for an unprivileged writer.
        var freeBytes: Int64?
        /// Days between the oldest check-in and now; nil when there is no visit (or it was not read).
        var daysOfData: Double?
        var visits: Int?
    }

    static func megabytes(_ bytes: Double) -> String { String(format: "%.1f MB", bytes / 1_000_000) }

    /// The diary: writable, and room for `recording_days` at the rate it has grown so far.
    static func diary(_ facts: DiaryFacts, recordingDays: Int?) -> DoctorLine {
        if let problem = facts.directoryProblem {
            return .problem("diary", "\(facts.path): \(problem)", fix: "set [diary] path to a file in /var/lib/venue-beacon (the service's state directory)")
        }
        let visits = facts.visits.map { "\($0) visits, " } ?? ""
        let size = "\(visits)\(megabytes(Double(facts.fileBytes)))"
        guard let free = facts.freeBytes else { return .unchecked("diary", "\(facts.path): \(size); free space not known") }
        let freeText = megabytes(Double(free)) + " free"
        guard let days = facts.daysOfData, days >= 1, facts.fileBytes > 0 else {
            return .ok("diary", "\(facts.path): \(size), \(freeText); write rate not measured yet (less than a day of visits)")
        }
        let perDay = Double(facts.fileBytes) / days
        let rate = "\(megabytes(perDay)) a day over \(Int(days)) days"
        guard let keep = recordingDays else {
            let lasts = Int(Double(free) / perDay)
            return .ok("diary", "\(facts.path): \(size), \(freeText) at \(rate): about \(lasts) more days (recording_days = \"forever\")")
        }
        let needed = perDay * Double(keep) - Double(facts.fileBytes)
        if needed > Double(free) {
            return .problem(
                "diary", "\(facts.path): \(size) at \(rate); recording_days = \(keep) needs about \(megabytes(needed)) more, \(freeText)",
                fix: "free space on the card (or use a larger one), or lower [diary] recording_days")
        }
        return .ok("diary", "\(facts.path): \(size), \(freeText); recording_days = \(keep) at \(rate) needs about \(megabytes(max(needed, 0))) more")
    }

    /// How the service reaches the msmtp account file: whether its user (venue-beacon, in
    /// groups venue-beacon and gpio) can read it.
    struct AccountFile: Sendable, Equatable {
        var path: String
        var mode: mode_t
        var ownerIsService: Bool
        var group: String
    }

    /// Email delivery: addresses, sealing, the sendmail program, its account.
    /// - Parameters:
    ///   - sendmailProblem: ``TrustedFile``'s verdict on `export.sendmail` (nil: fine).
    ///   - usesMsmtp: the program is msmtp's sendmail (then `account` matters).
    ///   - account: `/etc/msmtprc` as found; nil: none.
    static func email(_ export: ExportSettings, sendmailProblem: String?, usesMsmtp: Bool, account: AccountFile?) -> [DoctorLine] {
        guard !export.recipients.isEmpty else {
            return [.problem(
                "email", "export.email is empty: exports cannot be emailed to the contact tracers",
                fix: "set [export] email to the tracers' address and recipients to their age public keys (docs/export.md)")]
        }
        var lines: [DoctorLine] = []
        // Counted, not named: the checklist goes on the card too, which anyone may read.
        let to = "to \(export.recipients.count) \(export.recipients.count == 1 ? "address" : "addresses")"
        if export.refusesPlaintextEmail {
            lines.append(.problem("email", "\(to), but export.recipients is empty: emailed exports are refused", fix: ExportSettings.plaintextRefused))
        } else if export.ageRecipients.isEmpty {
            lines.append(.ok("email", "\(to), unsealed (export.plaintext = true)"))
        } else {
            lines.append(.ok("email", "\(to), sealed to \(export.ageRecipients.count) age \(export.ageRecipients.count == 1 ? "recipient" : "recipients")"))
        }
        if let sendmailProblem {
            lines.append(.problem("sendmail", sendmailProblem, fix: "sudo apt install msmtp-mta, or set [export] sendmail to the program"))
        } else {
            lines.append(.ok("sendmail", "\(export.sendmail) is there and executable"))
        }
        guard usesMsmtp else {
            lines.append(.unchecked("mail account", "\(export.sendmail) is not msmtp: its account is its own business"))
            return lines
        }
        guard let account else {
            return lines + [.problem(
                "mail account", "no \(ConfigImport.defaultMsmtprcPath): msmtp does not know the SMTP server",
                fix: "put the account on the boot partition as \(BootPartition.msmtprcName) and restart, or write \(ConfigImport.defaultMsmtprcPath) (docs/install.md)")]
        }
        let mode = String(account.mode & 0o777, radix: 8)
        let readable = account.mode & 0o004 != 0 || (account.ownerIsService && account.mode & 0o400 != 0)
            || (SystemChecks.serviceGroups.contains(account.group) && account.mode & 0o040 != 0)
        guard readable else {
            return lines + [.problem(
                "mail account", "\(account.path) is group \(account.group), mode 0\(mode): the service cannot read it",
                fix: "sudo chgrp \(ConfigImport.serviceGroup) \(account.path); sudo chmod 640 \(account.path)")]
        }
        if account.mode & 0o004 != 0 {
            return lines + [.problem(
                "mail account", "\(account.path) is readable by every user (mode 0\(mode)), password included",
                fix: "sudo chgrp \(ConfigImport.serviceGroup) \(account.path); sudo chmod 640 \(account.path)")]
        }
        return lines + [.ok("mail account", "\(account.path) group \(account.group), mode 0\(mode): the service can read it")]
    }

    /// Delivery to a directory (a USB stick): `DirectoryDelivery.check`'s verdict.
    static func directory(_ path: String?, problem: String?) -> DoctorLine? {
        guard let path else { return nil }
        if let problem { return .problem("USB directory", problem, fix: "plug the USB stick in (it is mounted at \(path)), or unset [export] directory") }
        return .ok("USB directory", "\(path) is mounted and writable")
    }

    /// The outbox: emails sendmail has not taken yet.
    static func outbox(_ entries: [OutboxEntry]?, error: String? = nil) -> DoctorLine {
        guard let entries else { return .unchecked("outbox", "cannot be read: \(error ?? "unknown")") }
        guard let oldest = entries.first else { return .ok("outbox", "empty: every export email was handed on") }
        let queued = Outbox.queuedAt(oldest.id).map { ", oldest queued \(UTCDate.readable($0))" } ?? ""
        let why = entries.compactMap(\.lastError).last.map { "; last error: \($0)" } ?? ""
        return .problem(
            "outbox", "\(entries.count) \(entries.count == 1 ? "email" : "emails") waiting\(queued)\(why)",
            fix: "fix what the error says (the mail account, the network), then venue-beacon outbox retry")
    }

    /// Opening hours: whether the node is open now (closed is no fault).
    static func hours(_ schedule: Schedule?, now: Date) -> DoctorLine {
        guard let schedule else { return .ok("opening hours", "none set: open around the clock") }
        let open = schedule.isOpen(at: now)
        let next = schedule.nextChange(after: now).map { " until \(UTCDate.readable($0))" } ?? ""
        if schedule.days.allSatisfy(\.isEmpty) {
            return .problem("opening hours", "[schedule] is closed on all seven days: the node never records", fix: "set the hours in [schedule], or remove it")
        }
        return .ok("opening hours", (open ? "open now" : "closed now (outside opening hours)") + next)
    }

    /// The venue hub, when `[replication]` is set: the broker reachable, and what the hub has
    /// acknowledged as the diary last heard. A login is not tried: it would be the node's own.
    static func hub(_ settings: ReplicationSettings?, unreachable: String?, backlog: Int?, acknowledgedAt: Double?) -> DoctorLine {
        guard let settings else { return .unchecked("venue hub", "not configured (no [replication]): the node keeps its visits to itself") }
        let broker = "\(settings.broker.host):\(settings.broker.port)"
        let heard = acknowledgedAt.map { "last acknowledgement \(UTCDate.readable(Date(timeIntervalSince1970: $0)))" } ?? "no acknowledgement heard yet"
        let waiting = backlog.map { "\($0) visits not yet acknowledged, " } ?? ""
        if let unreachable {
            return .problem(
                "venue hub", "broker \(broker) cannot be reached (\(unreachable)); \(waiting)\(heard)",
                fix: "check the network and [replication] broker; the hub's broker must be running (docs/venue.md)")
        }
        return .ok("venue hub", "broker \(broker) reachable as node \(settings.node) (login not tried here); \(waiting)\(heard)")
    }

    /// The config line's finding when the config is refused: the file named once, then each
    /// problem (one in another file, which none is today, keeps its name).
    static func configProblems(_ path: String, _ problems: [ConfigProblem]) -> String {
        "\(path): " + problems.map { $0.file == path ? $0.detail : $0.description }.joined(separator: "; ")
    }

    /// The config on the boot partition: an import refused leaves its file and the errors.
    static func card(directory: String, refused: Bool, pending: Bool) -> DoctorLine {
        if refused {
            return .problem(
                "boot partition", "\(directory)/\(BootPartition.configName) or \(BootPartition.msmtprcName) was refused: the node runs on its previous config",
                fix: "read \(directory)/\(BootPartition.errorName), fix the file, restart")
        }
        if pending {
            return .unchecked("boot partition", "a file waits in \(directory): it is imported at the next start (sudo systemctl restart venue-beacon)")
        }
        return .ok("boot partition", "nothing waiting in \(directory)")
    }
}

extension ServiceChecks {
    /// The status file on the boot partition: written as root at each start and by
    /// `venue-beacon-status.timer` every few minutes. `timer`: the timer's `ActiveState` as systemd
    /// says it (nil: systemd did not answer).
    static func statusFile(directory: String, exists: Bool, isFAT: Bool = true, timer: String?) -> DoctorLine {
        guard exists else { return .unchecked("status file", "no \(directory): no boot partition to write it on") }
        guard isFAT else { return .unchecked("status file", "\(directory) is not a FAT boot partition: no \(BootPartition.statusName) is written there") }
        let file = (directory as NSString).appendingPathComponent(BootPartition.statusName)
        switch timer {
        case "active":
            return .ok("status file", "\(file): written at each start, refreshed by \(statusTimer) every \(StatusFile.refreshMinutes) minutes")
        case nil:
            return .unchecked("status file", "\(file): written at each start; whether \(statusTimer) refreshes it is not known (systemctl did not answer)")
        case let state?:
            return .problem(
                "status file", "\(statusTimer) is \(state.isEmpty ? "unknown" : state): \(file) is written at each start only",
                fix: "sudo systemctl enable --now \(statusTimer)")
        }
    }

    static let statusTimer = "venue-beacon-status.timer"
}

/// Whether a TCP connection to `host:port` opens within `timeout` seconds: nil if it does, else
/// why not. Opens and closes a connection; sends nothing.
enum TCPProbe {
    static func unreachable(host: String, port: Int, timeout: Double) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { return "name not resolved: \(String(cString: gai_strerror(status)))" }
        defer { freeaddrinfo(list) }
        var last = "no address"
        var current: UnsafeMutablePointer<addrinfo>? = first
        while let info = current {
            current = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
            guard errno == EINPROGRESS else {
                last = String(cString: strerror(errno))
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&poller, 1, Int32(timeout * 1000))
            if ready == 0 {
                last = "no answer within \(Int(timeout)) s"
                continue
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 { return nil }
            last = String(cString: strerror(error))
        }
        return last
    }
}
