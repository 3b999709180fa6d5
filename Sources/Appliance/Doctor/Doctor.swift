import BLETransport
import Foundation
import Glibc
import VenueDiary

/// `venue-beacon doctor`: the installer's checklist. Each check is a pure function of what was
/// read (``BluetoothChecks``, ``SystemChecks``, ``ServiceChecks``, tested from recorded sysfs
/// texts and command outputs); this type only reads: sysfs, `/proc`, `timedatectl`, `stat`, the
/// diary opened read-only, the outbox's listing, and one TCP connection to the hub's broker. It
/// changes nothing.
///
/// Run as root (`sudo`, the service's start, `venue-beacon-status.timer`), the checks about the
/// service still answer for its user: GPIO by its groups, the mail account and the diary's
/// directory by its uid and groups.
public struct Doctor: Sendable {
    public var configPath: String
    public var bootDirectory: String

    public init(configPath: String, bootDirectory: String) {
        self.configPath = configPath
        self.bootDirectory = bootDirectory
    }

    /// Blocking (it runs timedatectl and connects to the broker): call it off the cooperative pool.
    public func run(now: Date = Date()) async -> DoctorReport {
        var lines: [DoctorLine] = []
        let settings: Settings?
        do {
            settings = try Settings.load(path: configPath)
            lines.append(.ok("config", "\(configPath) is valid"))
        } catch {
            lines.append(.problem(
                "config", ServiceChecks.configProblems(configPath, error.problems),
                fix: "venue-beacon config check lists every problem with what is allowed; or put a fixed venue-beacon.toml on the boot partition"))
            settings = (try? Settings.readText(path: configPath, example: "")).flatMap { try? Settings.parse($0, file: configPath) }
        }
        lines.append(ServiceChecks.card(
            directory: bootDirectory, refused: BootPartition.importRefused(in: bootDirectory),
            pending: exists(file(BootPartition.configName)) || exists(file(BootPartition.msmtprcName))))
        lines.append(ServiceChecks.statusFile(
            directory: bootDirectory, exists: BootPartition.isDirectory(bootDirectory), isFAT: BootPartition.isFAT(bootDirectory),
            timer: Self.output("/usr/bin/systemctl", ["show", "-P", "ActiveState", ServiceChecks.statusTimer])?
                .trimmingCharacters(in: .whitespacesAndNewlines)))

        // Bluetooth.
        lines.append(BluetoothChecks.rfkill(Self.rfkillSwitches()))
        let device = settings?.bluetooth.device ?? BluetoothSettings().device
        lines.append(BluetoothChecks.controller(
            device: device, adapters: Result(catching: { () throws(HCITransportError) -> [BluetoothAdapterInfo] in try BluetoothAdapterInfo.all() }),
            socketExists: exists))
        lines.append(BluetoothChecks.bluetoothd(running: BluetoothChecks.bluetoothdRunning(comms: Self.processNames())))
        lines.append(BluetoothChecks.leUnchecked)

        // The machine.
        if let settings {
            lines.append(SystemChecks.gpio(settings: settings.gpio, gpioGroupExists: getgrnam("gpio") != nil, chip: Self.chip(settings.gpio.chip)))
        }
        lines.append(SystemChecks.clock(
            show: Self.output("/usr/bin/timedatectl", ["show"]), timesync: Self.output("/usr/bin/timedatectl", ["show-timesync"]),
            flagSince: Self.modified(ClockSyncDetector.timesyncFlag)))

        guard let settings else { return DoctorReport(lines) }

        // The diary, delivery, the outbox, hours, the hub.
        let (facts, hub) = diaryFacts(settings, now: now)
        lines.append(ServiceChecks.diary(facts, recordingDays: settings.diary.recordingDays))
        let export = settings.export
        if !export.recipients.isEmpty || export.directory == nil {
            lines += ServiceChecks.email(
                export, sendmailProblem: TrustedFile.problem(export.sendmail, program: true), usesMsmtp: Self.isMsmtp(export.sendmail),
                account: Self.account(ConfigImport.defaultMsmtprcPath))
        }
        if let directory = export.directory {
            var problem: String?
            do throws(DirectoryDeliveryError) {
                try DirectoryDelivery(directory: directory, requireMount: export.requireMount).check()
            } catch {
                problem = error.description
            }
            if let line = ServiceChecks.directory(directory, problem: problem) { lines.append(line) }
        }
        do throws(FileSystemError) {
            lines.append(ServiceChecks.outbox(try await ExportDelivery(settings: settings).outbox.entries()))
        } catch {
            lines.append(ServiceChecks.outbox(nil, error: error.description))
        }
        lines.append(ServiceChecks.hours(settings.schedule, now: now))
        if let replication = settings.replication {
            let unreachable = TCPProbe.unreachable(host: replication.broker.host, port: replication.broker.port, timeout: 3)
            lines.append(ServiceChecks.hub(replication, unreachable: unreachable, backlog: hub?.backlog, acknowledgedAt: hub?.heard))
        } else {
            lines.append(ServiceChecks.hub(nil, unreachable: nil, backlog: nil, acknowledgedAt: nil))
        }
        return DoctorReport(lines)
    }

    private func file(_ name: String) -> String { (bootDirectory as NSString).appendingPathComponent(name) }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The diary's facts and, with `[replication]`, what the hub acknowledged (read-only).
    private func diaryFacts(_ settings: Settings, now: Date) -> (ServiceChecks.DiaryFacts, (backlog: Int, heard: Double?)?) {
        let path = settings.diary.path
        let directory = (path as NSString).deletingLastPathComponent
        var problem = Settings.directoryProblem(forFileAt: path)
        if problem == nil, !Self.serviceCanWrite(directory) {
            problem = "its directory \(directory) is not writable by \(ConfigImport.serviceGroup)"
        }
        var bytes: Int64 = 0
        for suffix in ["", "-wal"] {
            var info = stat()
            if stat(path + suffix, &info) == 0 { bytes += Int64(info.st_size) }
        }
        var fs = statvfs()
        let free: Int64? = statvfs(access(directory, F_OK) == 0 ? directory : "/", &fs) == 0 ? Int64(fs.f_bavail) * Int64(fs.f_frsize) : nil
        var facts = ServiceChecks.DiaryFacts(path: path, directoryProblem: problem, fileBytes: bytes, freeBytes: free, daysOfData: nil, visits: nil)
        // Root opening a diary whose service is stopped would leave SQLite's -shm (and -wal)
        // owned by root beside it, which the service could not open: only with the service's
        // own -shm there (it runs) does root read it.
        let sharesIndex = geteuid() != 0 || access(path + "-shm", F_OK) == 0
        guard bytes > 0, sharesIndex, let store = try? DiaryStore(path: path, readOnly: true) else { return (facts, nil) }
        if let stats = try? store.stats() {
            facts.visits = stats.visits
            facts.daysOfData = stats.oldestCheckIn.map { (now.timeIntervalSince1970 - $0) / 86_400 }
        }
        var hub: (backlog: Int, heard: Double?)?
        if settings.replication != nil, let diary = try? store.diaryID() {
            let ack = (try? store.replicationAck())?.flatMap { $0.diary == diary ? $0 : nil }
            if let backlog = try? store.backlog(after: ack?.acked ?? 0) { hub = (backlog, ack?.at) }
        }
        return (facts, hub)
    }

    // MARK: readers

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    static func list(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// `/sys/class/rfkill/*`.
    static func rfkillSwitches(root: String = "/sys/class/rfkill") -> [RfkillSwitch] {
        list(root).compactMap { id in
            let base = (root as NSString).appendingPathComponent(id)
            return RfkillSwitch.parse(
                id: id, name: read(base + "/name"), type: read(base + "/type"), soft: read(base + "/soft"), hard: read(base + "/hard"))
        }
    }

    /// Every process's name, from `/proc/<pid>/comm`.
    static func processNames() -> [String] {
        list("/proc").filter { $0.allSatisfy(\.isNumber) }.compactMap { read("/proc/\($0)/comm") }
    }

    static func chip(_ chip: String) -> SystemChecks.ChipDevice? {
        var labels: [String: String] = [:]
        for name in list("/sys/bus/gpio/devices") where name.hasPrefix("gpiochip") {
            if let label = read("/sys/bus/gpio/devices/\(name)/label") { labels[name] = label.trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        // The character device's own label (what the service opens a chip by): sysfs has a
        // `label` file only for the legacy /sys/class/gpio interface, which kernels built without
        // it (Debian's, gpio-sim chips) lack.
        if !labels.values.contains(chip) {
            for info in GPIOBackendSystem().availableChips() {
                if let label = info.label, labels[info.name] == nil { labels[info.name] = label }
            }
        }
        let path = SystemChecks.chipPath(chip, labels: labels)
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFCHR else { return nil }
        return SystemChecks.ChipDevice(path: path, mode: info.st_mode & 0o7777, uid: info.st_uid, group: groupName(info.st_gid))
    }

    static func groupName(_ gid: gid_t) -> String {
        getgrgid(gid).flatMap { $0.pointee.gr_name.map { String(cString: $0) } } ?? "gid \(gid)"
    }

    static func account(_ path: String) -> ServiceChecks.AccountFile? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let service = getpwnam(ConfigImport.serviceGroup).map { $0.pointee.pw_uid }
        return ServiceChecks.AccountFile(
            path: path, mode: info.st_mode & 0o7777, ownerIsService: service == info.st_uid, group: groupName(info.st_gid))
    }

    static func isMsmtp(_ program: String) -> Bool {
        guard let real = realpath(program, nil) else { return program.contains("msmtp") }
        defer { free(real) }
        return (String(cString: real) as NSString).lastPathComponent.hasPrefix("msmtp")
    }

    /// Whether the service's user can write in `directory`: it owns it, or this process (which
    /// may be the service) can.
    static func serviceCanWrite(_ directory: String) -> Bool {
        if directory == Settings.stateDirectory, access(directory, F_OK) != 0 { return true }  // systemd creates it
        var info = stat()
        guard stat(directory, &info) == 0 else { return access(directory, W_OK) == 0 }
        if let service = getpwnam(ConfigImport.serviceGroup)?.pointee.pw_uid, info.st_uid == service { return true }
        return access(directory, W_OK) == 0
    }

    static func modified(_ path: String) -> Date? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec))
    }

    /// A program's standard output, or nil when it is missing, fails or takes over 10 s.
    static func output(_ program: String, _ arguments: [String]) -> String? {
        guard access(program, X_OK) == 0 else { return nil }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(null) }
        guard let (exit, output) = try? ChildProcess.run(program, arguments, stdin: null, captureStdout: true, timeout: 10), exit == .status(0)
        else { return nil }
        return String(decoding: output, as: UTF8.self)
    }
}
