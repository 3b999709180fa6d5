import Foundation
import Glibc

/// Where `venue-beacon export --output PATH` writes, chosen by what is at PATH:
///
/// - `-`: standard output;
/// - a character device or a FIFO (`/dev/null`, a pipe to another program): written into, never
///   replaced;
/// - a regular file, or nothing: a new file written beside it and renamed over it when complete
///   (``AtomicFile``), mode 0600 whatever the umask, since it holds visit data; an existing file
///   is replaced, never written into, so a reader or a power cut sees the old or the new export;
/// - a symbolic link: refused. Following it would let whoever can create a link decide which
///   file an export run as root replaces; name the real path instead;
/// - a directory, a socket or a block device: refused;
/// - a file the command must not lose (`protecting`: the diary and its `-wal`/`-shm`, the node's
///   signing key, the config, the command's own inputs): refused, whatever the path says. Two
///   paths name the same file when device and inode agree (links, `..`, bind mounts); a file
///   not there yet is named by its directory's device and inode and its name.
public final class OutputFile {
    private enum Target {
        case stream(fd: Int32, closeAtEnd: Bool)
        case replacing(AtomicFile.Writer)
    }

    /// The path as given (`-` for standard output), for messages.
    public let path: String
    private let target: Target

    /// Opens `path` as described above. Throws ``OutputFileError``.
    public init(_ path: String, protecting: [ProtectedFile] = []) throws {
        self.path = path
        if path == "-" {
            target = .stream(fd: STDOUT_FILENO, closeAtEnd: false)
            return
        }
        if let kept = protecting.first(where: { Self.sameFile(path, $0.path) }) {
            let same = kept.path == path ? "" : " (\(kept.path))"
            throw OutputFileError.refused(path: path, reason: "it is \(kept.role)\(same), which this command must not overwrite; name another file")
        }
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw OutputFileError.cannotOpen(FileSystemError(operation: "look at", path: path, code: errno)) }
            target = .replacing(try Self.replacing(path))
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            target = .replacing(try Self.replacing(path))
        case S_IFCHR, S_IFIFO:
            let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { throw OutputFileError.cannotOpen(FileSystemError(operation: "open", path: path, code: errno)) }
            target = .stream(fd: fd, closeAtEnd: true)
        case S_IFLNK:
            throw OutputFileError.refused(path: path, reason: "it is a symbolic link; give the path it points to")
        case S_IFDIR:
            throw OutputFileError.refused(path: path, reason: "it is a directory; name a file in it")
        default:
            throw OutputFileError.refused(path: path, reason: "it is neither a regular file, a character device nor a FIFO")
        }
    }

    private static func replacing(_ path: String) throws -> AtomicFile.Writer {
        do throws(FileSystemError) {
            return try AtomicFile.Writer(replacing: path, mode: 0o600)
        } catch {
            // No room even for the new file is a full disk, not a place that cannot take one.
            throw error.isWriteFailure ? OutputFileError.cannotWrite(error) : OutputFileError.cannotOpen(error)
        }
    }

    /// Whether two paths name the same file (device and inode; for a file not there yet, its
    /// directory and name).
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        guard a != "-", b != "-", let first = FileIdentity(a) else { return false }
        return first == FileIdentity(b)
    }

    /// The name messages use: the path, or "standard output".
    public var name: String { path == "-" ? "standard output" : path }

    public func write(_ bytes: [UInt8]) throws {
        do throws(FileSystemError) {
            switch target {
            case .stream(let fd, _): try FileDescriptor.writeAll(fd, bytes, path: name)
            case .replacing(let file): try file.write(bytes)
            }
        } catch {
            throw OutputFileError.cannotWrite(error)
        }
    }

    /// Makes what was written final: renames a replacement into place; closes a device or FIFO.
    public func commit() throws {
        switch target {
        case .stream(let fd, let closeAtEnd):
            if closeAtEnd { close(fd) }
        case .replacing(let file):
            do throws(FileSystemError) {
                try file.commit()
            } catch {
                file.abandon()
                throw error.isWriteFailure ? OutputFileError.cannotWrite(error) : OutputFileError.cannotOpen(error)
            }
        }
    }

    /// Gives up: a replacement is deleted (the old file stays); a device or FIFO is closed.
    public func abandon() {
        switch target {
        case .stream(let fd, let closeAtEnd): if closeAtEnd { close(fd) }
        case .replacing(let file): file.abandon()
        }
    }
}

/// A file an output must not replace, and what it is to the node ("the diary", "the node's
/// signing key"), for the message.
public struct ProtectedFile: Sendable, Equatable {
    public var path: String
    public var role: String

    public init(_ path: String, role: String) {
        self.path = path
        self.role = role
    }

    /// The diary and the files SQLite keeps beside it.
    public static func diary(_ path: String) -> [ProtectedFile] {
        [ProtectedFile(path, role: "the diary")]
            + ["-wal", "-shm", "-journal"].map { ProtectedFile(path + $0, role: "the diary's \($0.dropFirst()) file") }
    }
}

/// What a path names: an existing file's device and inode, or, for a file not there yet, its
/// directory's device and inode and its name. Nil when not even the directory is there.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    var name: String?

    init?(_ path: String) {
        var info = stat()
        if stat(path, &info) == 0 {
            (device, inode, name) = (UInt64(info.st_dev), UInt64(info.st_ino), nil)
            return
        }
        let (directory, name) = Self.split(path)
        guard stat(directory, &info) == 0 else { return nil }
        (device, inode, self.name) = (UInt64(info.st_dev), UInt64(info.st_ino), name)
    }

    /// A path's directory (`.` for a bare name) and last component, by the slashes alone
    /// (Foundation's path functions trap on some short names, "-" among them).
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = path[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
    }
}

/// Why an export could not be written where it was asked to go.
public enum OutputFileError: Error, CustomStringConvertible {
    /// The place is not one an export may be written to.
    case refused(path: String, reason: String)
    /// The file could not be created or put in place (sysexits EX_CANTCREAT).
    case cannotOpen(FileSystemError)
    /// Bytes could not be written or synced: disk full, I/O error (sysexits EX_IOERR).
    case cannotWrite(FileSystemError)

    public var description: String {
        switch self {
        case let .refused(path, reason): "refusing to write to \(path): \(reason)"
        case let .cannotOpen(error), let .cannotWrite(error): error.description
        }
    }
}
