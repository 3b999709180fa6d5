import Foundation
import Glibc

/// Why an export could not be written to the export directory, in words for an operator.
public enum DirectoryDeliveryError: Error, Sendable, Equatable, CustomStringConvertible {
    case notConfigured
    case missing(String)
    case notADirectory(String)
    case notMounted(String)
    case readOnly(String)
    case notWritable(String, uid: UInt32)
    case failed(FileSystemError)

    public var description: String {
        switch self {
        case .notConfigured:
            return "no export directory is configured: set export.directory (e.g. \"/media/usb\")"
        case .missing(let path):
            return "export directory \(path) does not exist: is the USB stick plugged in and mounted?"
        case .notADirectory(let path):
            return "export directory \(path) is not a directory"
        case .notMounted(let path):
            return "nothing is mounted on export directory \(path): plug in and mount the USB stick "
                + "(or set export.require_mount = false to write to a plain directory)"
        case .readOnly(let path):
            return "export directory \(path) is read-only (a write-protected stick, or mounted read-only)"
        case .notWritable(let path, let uid):
            return "export directory \(path) is not writable by this user (uid \(uid)): permission denied"
        case .failed(let error):
            return "writing the export failed: \(error)"
        }
    }
}

/// Writes exports into a directory, usually a USB stick's mount point.
public struct DirectoryDelivery: Sendable {
    public var directory: String
    /// Refuse a directory that nothing is mounted on (see `ExportSettings.requireMount`).
    public var requireMount: Bool

    public init(directory: String, requireMount: Bool) {
        self.directory = directory
        self.requireMount = requireMount
    }

    /// Checks the directory, then writes `data` as `name` atomically. Returns the file's path.
    /// Blocking (fsync on a USB stick can take seconds): call it off the cooperative pool.
    public func write(_ data: Data, named name: String) throws(DirectoryDeliveryError) -> String {
        try check()
        let path = (directory as NSString).appendingPathComponent(name)
        do throws(FileSystemError) {
            // Visit data: the owner's only where the file system has modes (ext4); FAT sticks,
            // the usual kind, have none and whoever holds the stick reads it.
            try AtomicFile.write(data, to: path, mode: 0o600)
        } catch {
            switch error.code {
            case EROFS: throw .readOnly(directory)
            case EACCES, EPERM: throw .notWritable(directory, uid: geteuid())
            default: throw .failed(error)
            }
        }
        return path
    }

    /// Says which of absent, not a directory, not mounted, read-only or not writable applies.
    public func check() throws(DirectoryDeliveryError) {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            if errno == ENOENT { throw .missing(directory) }
            if errno == ENOTDIR { throw .notADirectory(directory) }
            throw .failed(FileSystemError(operation: "stat", path: directory, code: errno))
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw .notADirectory(directory) }
        if requireMount {
            var parent = stat()
            let up = (directory as NSString).appendingPathComponent("..")
            if stat(up, &parent) == 0, parent.st_dev == info.st_dev, parent.st_ino != info.st_ino {
                throw .notMounted(directory)
            }
        }
        var fs = statvfs()
        if statvfs(directory, &fs) == 0, fs.f_flag & UInt(ST_RDONLY) != 0 { throw .readOnly(directory) }
        if access(directory, W_OK | X_OK) != 0 {
            if errno == EROFS { throw .readOnly(directory) }
            throw .notWritable(directory, uid: geteuid())
        }
    }
}
