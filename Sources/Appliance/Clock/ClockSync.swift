import Foundation
import Glibc

/// Whether the system clock has been synchronised since boot. The Pi has no real-time clock:
/// until it syncs, wall time is whatever was saved at the last shutdown (or power cut).
///
/// Two signals, as systemd gives them: `/run/systemd/timesync/synchronized`, which
/// systemd-timesyncd creates at its first sync, and `timedatectl show -p NTPSynchronized`,
/// the kernel's own flag (covers chrony or ntpd). The probes are injectable for tests.
public struct ClockSyncDetector: Sendable {
    public var fileExists: @Sendable (String) -> Bool
    /// The output of `timedatectl show -p NTPSynchronized --value`, or nil if it cannot run.
    public var timedatectl: @Sendable () -> String?

    public static let timesyncFlag = "/run/systemd/timesync/synchronized"

    public init(fileExists: @escaping @Sendable (String) -> Bool, timedatectl: @escaping @Sendable () -> String?) {
        self.fileExists = fileExists
        self.timedatectl = timedatectl
    }

    /// The real system. Blocking (it may run timedatectl): call it off the cooperative pool.
    public static let system = ClockSyncDetector(
        fileExists: { access($0, F_OK) == 0 },
        timedatectl: {
            let program = "/usr/bin/timedatectl"
            guard access(program, X_OK) == 0 else { return nil }
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(null) }
            guard let (exit, output) = try? ChildProcess.run(
                program, ["show", "-p", "NTPSynchronized", "--value"], stdin: null, captureStdout: true, timeout: 10),
                exit == .status(0)
            else { return nil }
            return String(decoding: output, as: UTF8.self)
        })

    public func isSynchronized() -> Bool {
        if fileExists(Self.timesyncFlag) { return true }
        return timedatectl()?.trimmingCharacters(in: .whitespacesAndNewlines) == "yes"
    }
}

/// A reading of the boot-time clock (CLOCK_BOOTTIME: monotonic, counts suspend, starts at
/// boot) with the boot it belongs to.
public struct BootTime: Sendable, Equatable {
    public var seconds: Double
    public var bootID: String

    public init(seconds: Double, bootID: String) {
        self.seconds = seconds
        self.bootID = bootID
    }

    public static func now() -> BootTime {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return BootTime(seconds: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9, bootID: currentBootID)
    }

    /// This boot's id, a new random UUID each boot (see ``bootID(environment:readFile:)``).
    public static let currentBootID: String = bootID(
        environment: ProcessInfo.processInfo.environment,
        readFile: { try? String(contentsOfFile: $0, encoding: .utf8) })

    /// The variable the unit sets to systemd's `%b`, the boot id: its sandbox (`ProcSubset=pid`)
    /// hides `/proc/sys`.
    public static let bootIDVariable = "VENUE_BEACON_BOOT_ID"
    /// Where the kernel gives the boot id.
    public static let bootIDFile = "/proc/sys/kernel/random/boot_id"
    /// What an id of this process alone starts with.
    public static let processBootIDPrefix = "process-"

    /// The boot id from `$VENUE_BEACON_BOOT_ID` (32 hex digits as systemd's `%b` gives them, or
    /// a UUID), else from `/proc/sys/kernel/random/boot_id`. When neither can be read it is an id
    /// of this process alone (`process-` and a random UUID), never a constant: visits recorded
    /// before sync are marked with it, and a constant shared by every boot would let a later
    /// boot "correct" an earlier boot's visits by the time between the two. With an id of its
    /// own, a process corrects only what it recorded itself.
    public static func bootID(environment: [String: String], readFile: (String) -> String?) -> String {
        if let id = environment[bootIDVariable].flatMap(canonicalBootID) { return id }
        if let id = readFile(bootIDFile).flatMap(canonicalBootID) { return id }
        return processBootIDPrefix + UUID().uuidString.lowercased()
    }

    /// A boot id in the kernel's form (lowercase UUID with dashes) from that form or systemd's
    /// (32 hex digits); nil for anything else.
    static func canonicalBootID(_ text: String) -> String? {
        let hex = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().filter { $0 != "-" }
        guard hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
        let digits = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
    }
}
