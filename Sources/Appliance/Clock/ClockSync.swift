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

    /// `/proc/sys/kernel/random/boot_id`: a new random UUID each boot.
    public static let currentBootID: String = {
        (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }()
}
