import Foundation
import Glibc

/// The FAT boot partition any laptop can edit: Raspberry Pi OS's place for headless set-up
/// (`/boot/firmware` since bookworm, `/boot` on older images), and the names of the files the
/// node reads from it and leaves on it (docs/install.md).
public enum BootPartition {
    /// Tried in this order: the first that is a directory is the boot partition.
    public static let candidates = ["/boot/firmware", "/boot"]

    /// A config the installer put there: validated and applied at start (``ConfigImport``).
    public static let configName = "venue-beacon.toml"
    /// An msmtp account file the installer put there: becomes `/etc/msmtprc`.
    public static let msmtprcName = "venue-beacon-msmtprc"
    /// Left by a successful import: when, and the fingerprint of what was applied.
    public static let receiptName = "venue-beacon-applied.txt"
    /// Left by a refused import: every problem, as `config check` prints them.
    public static let errorName = "venue-beacon-error.txt"
    /// Written by the running service: the doctor's checklist and the status line.
    public static let statusName = "venue-beacon-status.txt"

    /// The boot partition's directory: `/boot/firmware` when it exists, else `/boot`.
    public static func directory(isDirectory: (String) -> Bool = BootPartition.isDirectory) -> String {
        candidates.first(where: isDirectory) ?? candidates[candidates.count - 1]
    }

    /// Where the status file goes: the boot partition when it is one (a FAT file system, as on
    /// a Raspberry Pi), nil otherwise: a plain Debian `/boot` holds kernels, not notes.
    public static func statusDirectory(isFAT: (String) -> Bool = BootPartition.isFAT) -> String? {
        let directory = directory()
        return isFAT(directory) ? directory : nil
    }

    /// Whether `path` is on a FAT file system (vfat or msdos), as `/proc/self/mounts` says.
    public static func isFAT(_ path: String) -> Bool {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        let real = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        return ["vfat", "msdos"].contains(fileSystemType(of: real, mounts: mounts) ?? "")
    }

    /// The type of the file system `path` (absolute, no links) is on: the mount point that is
    /// its longest prefix in `mounts` (`/proc/self/mounts`: device, mount point, type, …; spaces
    /// in a mount point written `\040`).
    static func fileSystemType(of path: String, mounts: String) -> String? {
        var best: (length: Int, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let covers = point == "/" || path == point || path.hasPrefix(point + "/")
            if covers, point.count >= (best?.length ?? -1) { best = (point.count, String(fields[2])) }
        }
        return best?.type
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// Whether an import was refused and the file still waits on the card for its fix: the
    /// status LED shows a config error while it does.
    public static func importRefused(in directory: String) -> Bool {
        access((directory as NSString).appendingPathComponent(errorName), F_OK) == 0
            && (access((directory as NSString).appendingPathComponent(configName), F_OK) == 0
                || access((directory as NSString).appendingPathComponent(msmtprcName), F_OK) == 0)
    }
}
