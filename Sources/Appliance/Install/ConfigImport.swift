import Crypto
import Foundation
import Glibc

/// The config from the boot partition (`venue-beacon config import`, and at every service start
/// through the unit's `ExecStartPre=`): an installer edits `venue-beacon.toml` (and, for email,
/// `venue-beacon-msmtprc`) on the card's FAT partition with any laptop, and the node takes it.
///
/// Each file is taken whole or not at all:
///
/// - the config is staged beside the installed one (same directory, its final group and mode)
///   and validated there by ``Settings/load(path:)``, exactly as `config check` and the service
///   validate it; valid, the installed config is kept as `….previous` and the staged file
///   renamed over it; invalid, the staged file is removed and nothing else changes;
/// - applied, the file is **removed from the card** (FAT has no permissions: whoever reads the
///   card would read the SMTP password or the tracers' settings) and `venue-beacon-applied.txt`
///   says when and what (the config's SHA-256, no secret); refused, the file stays for its fix and
///   `venue-beacon-error.txt` lists every problem as `config check` prints them.
///
/// Installed files belong to root and the service's group, mode 0640: the service (user
/// venue-beacon) reads them, nobody else does, and only root may change them (the config names
/// the program root runs for sendmail, so ``TrustedFile`` refuses one the service could change).
public struct ConfigImport: Sendable {
    public var bootDirectory: String
    public var configPath: String
    public var msmtprcPath: String
    /// The group installed files get; nil: the importing process's own.
    public var group: gid_t?

    /// Where msmtp-mta (`/usr/sbin/sendmail`) reads its system-wide account.
    public static let defaultMsmtprcPath = "/etc/msmtprc"
    /// The service's group (the package's `adduser --system --group venue-beacon`).
    public static let serviceGroup = "venue-beacon"
    /// Installed files: owner read-write, the service's group read.
    public static let installedMode: mode_t = 0o640
    /// An msmtp account is a few lines.
    static let msmtprcLimit = 64 * 1024

    public init(bootDirectory: String, configPath: String, msmtprcPath: String = ConfigImport.defaultMsmtprcPath, group: gid_t?) {
        self.bootDirectory = bootDirectory
        self.configPath = configPath
        self.msmtprcPath = msmtprcPath
        self.group = group
    }

    /// The service group's id, when this system has that group.
    public static func serviceGroupID() -> gid_t? { getgrnam(serviceGroup).map { $0.pointee.gr_gid } }

    /// What became of one file.
    public enum Outcome: Sendable, Equatable {
        /// Not on the card.
        case absent
        /// Installed. `fingerprint`: SHA-256 of the bytes (the config only: the msmtp account
        /// holds a password, and a hash of it would let the card's reader test guesses).
        /// `previous`: where the file it replaced is kept.
        case applied(bytes: Int, fingerprint: String?, previous: String?)
        /// Not installed, with every problem, one line each.
        case refused([String])

        public var isRefused: Bool { if case .refused = self { true } else { false } }
        public var isApplied: Bool { if case .applied = self { true } else { false } }
    }

    public struct Report: Sendable, Equatable {
        public var config: Outcome = .absent
        public var msmtprc: Outcome = .absent
        /// The receipt or error file that could not be written on the card, or a file applied
        /// but not removed from it.
        public var cardProblems: [String] = []

        public var nothingToDo: Bool { config == .absent && msmtprc == .absent }
        public var refused: Bool { config.isRefused || msmtprc.isRefused }
    }

    var bootConfig: String { path(BootPartition.configName) }
    var bootMsmtprc: String { path(BootPartition.msmtprcName) }
    var receiptPath: String { path(BootPartition.receiptName) }
    var errorPath: String { path(BootPartition.errorName) }
    var access: InstalledFile.Access { InstalledFile.Access(mode: Self.installedMode, group: group) }
    public var previousConfigPath: String { configPath + ".previous" }

    private func path(_ name: String) -> String { (bootDirectory as NSString).appendingPathComponent(name) }

    /// Imports what the card holds and leaves the receipt or the errors there.
    public func run(now: Date = Date()) -> Report {
        var report = Report()
        report.config = importConfig()
        report.msmtprc = importMsmtprc()
        if report.nothingToDo { return report }

        var applied: [(String, String)] = []
        if report.config.isApplied { applied.append((bootConfig, BootPartition.configName)) }
        if report.msmtprc.isApplied { applied.append((bootMsmtprc, BootPartition.msmtprcName)) }
        for (file, name) in applied {
            do throws(FileSystemError) {
                try InstalledFile.remove(file)
            } catch {
                report.cardProblems.append("\(name) was applied but is still on the card (\(error)): delete it by hand, it is readable by anyone with the card")
            }
        }
        let card = InstalledFile.Access(mode: 0o644, group: nil)
        do throws(FileSystemError) {
            if report.refused {
                try InstalledFile.write(Array(errorText(report, now: now).utf8), to: errorPath, access: card)
            } else {
                // A stale error file would contradict the receipt.
                try InstalledFile.remove(errorPath)
            }
            if !applied.isEmpty {
                try InstalledFile.write(Array(receiptText(report, now: now).utf8), to: receiptPath, access: card)
            }
        } catch {
            report.cardProblems.append("cannot write on the boot partition: \(error)")
        }
        return report
    }

    // MARK: the config

    private func importConfig() -> Outcome {
        let bytes: [UInt8]
        do throws(InstalledFile.ReadProblem) {
            guard let read = try InstalledFile.read(bootConfig, limit: Settings.maximumFileBytes) else { return .absent }
            bytes = read
        } catch {
            return .refused(["\(bootConfig): \(error)"])
        }
        let staged: String
        do throws(FileSystemError) {
            staged = try InstalledFile.stage(bytes, beside: configPath, access: access)
        } catch {
            return .refused(["\(bootConfig): cannot be installed as \(configPath): \(error)"])
        }
        do throws(ConfigError) {
            _ = try Settings.load(path: staged)
        } catch {
            unlink(staged)
            // Named as the installer knows it: the file on the card.
            return .refused(error.problems.map { problem in
                var named = problem
                named.file = bootConfig
                return named.description.replacingOccurrences(of: staged, with: configPath)
            })
        }
        return install(staged, bytes: bytes, as: configPath, keeping: previousConfigPath, fingerprint: true)
    }

    // MARK: the msmtp account

    private func importMsmtprc() -> Outcome {
        let bytes: [UInt8]
        do throws(InstalledFile.ReadProblem) {
            guard let read = try InstalledFile.read(bootMsmtprc, limit: Self.msmtprcLimit) else { return .absent }
            bytes = read
        } catch {
            return .refused(["\(bootMsmtprc): \(error)"])
        }
        let problems = Self.msmtprcProblems(bytes)
        guard problems.isEmpty else { return .refused(problems.map { "\(bootMsmtprc): \($0)" }) }
        let staged: String
        do throws(FileSystemError) {
            staged = try InstalledFile.stage(bytes, beside: msmtprcPath, access: access)
        } catch {
            return .refused(["\(bootMsmtprc): cannot be installed as \(msmtprcPath): \(error)"])
        }
        return install(staged, bytes: bytes, as: msmtprcPath, keeping: msmtprcPath + ".previous", fingerprint: false)
    }

    /// What makes an msmtp account file unusable before msmtp is ever run: not UTF-8 text, a NUL,
    /// no `host` (the SMTP server) or no `from` (msmtp-mta's `sendmail -t` takes the sender from
    /// the account). msmtp itself judges the rest when it sends.
    static func msmtprcProblems(_ bytes: [UInt8]) -> [String] {
        guard let text = String(validating: bytes, as: UTF8.self) else { return ["cannot be read as UTF-8 text"] }
        if bytes.contains(0) { return ["it holds a NUL byte: an msmtp account file is text"] }
        let keys = Set(
            text.split(whereSeparator: \.isNewline).compactMap { line -> String? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return nil }
                return trimmed.split(whereSeparator: \.isWhitespace).first.map(String.init)
            })
        var problems: [String] = []
        if !keys.contains("host") { problems.append("no host line: msmtp needs the SMTP server (host smtp.example.org)") }
        if !keys.contains("from") { problems.append("no from line: msmtp needs the sender address (from venue@example.org)") }
        return problems
    }

    // MARK: installing

    /// Keeps the installed file as `previous` (unless it already holds these very bytes: an
    /// import interrupted after its rename and repeated must not lose the real previous one),
    /// then renames the staged file into place.
    private func install(_ staged: String, bytes: [UInt8], as target: String, keeping previous: String, fingerprint: Bool) -> Outcome {
        var kept: String?
        do throws(FileSystemError) {
            if let current = try? InstalledFile.read(target, limit: Settings.maximumFileBytes), current != bytes {
                try InstalledFile.write(current, to: previous, access: access)
                kept = previous
            }
            try InstalledFile.commit(staged, to: target)
        } catch {
            unlink(staged)
            return .refused(["cannot install \(target): \(error)"])
        }
        return .applied(bytes: bytes.count, fingerprint: fingerprint ? Self.sha256(bytes) : nil, previous: kept)
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: what the card says

    func receiptText(_ report: Report, now: Date) -> String {
        var lines = ["venue-beacon applied the files from this card at \(UTCDate.readable(now)).", ""]
        func describe(_ outcome: Outcome, name: String, target: String) {
            guard case .applied(let bytes, let fingerprint, let previous) = outcome else { return }
            lines.append("\(name): installed as \(target) (\(bytes) bytes)" + (previous.map { "; the one before is kept as \($0)" } ?? ""))
            if let fingerprint {
                lines.append("  SHA-256 \(fingerprint)")
                lines.append("  (sha256sum \(name) on your copy prints the same when it is the same file)")
            } else {
                lines.append("  no fingerprint: the file holds the mail password")
            }
        }
        describe(report.config, name: BootPartition.configName, target: configPath)
        describe(report.msmtprc, name: BootPartition.msmtprcName, target: msmtprcPath)
        lines += [
            "",
            "The applied files were removed from the card: it has no permissions, and anyone who",
            "reads it could read them. The node's own checklist is in \(BootPartition.statusName).",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    func errorText(_ report: Report, now: Date) -> String {
        var lines = [
            "venue-beacon could not apply the files on this card (\(UTCDate.readable(now))).",
            "Nothing of a refused file was applied: the node runs as it did before.",
            "Fix every line below, then restart the node (unplug it and plug it in again).",
        ]
        for (outcome, name) in [(report.config, BootPartition.configName), (report.msmtprc, BootPartition.msmtprcName)] {
            guard case .refused(let problems) = outcome else { continue }
            lines += ["", "\(name):"] + problems
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
