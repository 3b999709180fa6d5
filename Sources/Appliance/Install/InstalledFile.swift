import Foundation
import Glibc

/// Writes a whole file the way ``AtomicFile`` does (a temporary file beside it, fsync, rename,
/// fsync the directory: a reader or a power cut sees the old file or the new one, on ext4 and
/// on the FAT boot partition alike), and gives it a group before it becomes visible, so a
/// config the service must read is never there, even for a moment, with the wrong owner.
enum InstalledFile {
    /// The group and mode a file gets. `group` nil: the process's own group.
    struct Access: Sendable, Equatable {
        var mode: mode_t
        var group: gid_t?
    }

    /// A temporary file beside `path` holding `bytes`, synced, with `access`; the caller renames
    /// it into place (``commit(_:to:)``) or unlinks it.
    static func stage(_ bytes: [UInt8], beside path: String, access: Access) throws(FileSystemError) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = "\(directory.isEmpty ? "." : directory)/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, access.mode)
        guard fd >= 0 else { throw FileSystemError(operation: "create", path: temporary, code: errno) }
        func fail(_ operation: String) -> FileSystemError {
            let error = FileSystemError(operation: operation, path: temporary, code: errno)
            close(fd)
            unlink(temporary)
            return error
        }
        // Only the group: the owner is whoever writes (root, as the import runs).
        if let group = access.group, fchown(fd, uid_t.max, group) != 0 { throw fail("chown") }
        // EPERM on a file system without modes (FAT): it has none to set.
        guard fchmod(fd, access.mode) == 0 || errno == EPERM else { throw fail("chmod") }
        do throws(FileSystemError) {
            try FileDescriptor.writeAll(fd, bytes, path: temporary)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard fsync(fd) == 0 else { throw fail("fsync") }
        guard close(fd) == 0 else {
            let error = FileSystemError(operation: "close", path: temporary, code: errno)
            unlink(temporary)
            throw error
        }
        return temporary
    }

    /// Renames a staged file over `path` and makes the rename durable.
    static func commit(_ temporary: String, to path: String) throws(FileSystemError) {
        guard rename(temporary, path) == 0 else {
            let error = FileSystemError(operation: "rename", path: path, code: errno)
            unlink(temporary)
            throw error
        }
        try AtomicFile.syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// Writes `bytes` as `path`, atomically.
    static func write(_ bytes: [UInt8], to path: String, access: Access) throws(FileSystemError) {
        try commit(try stage(bytes, beside: path, access: access), to: path)
    }

    /// Removes `path` durably; a file already gone is fine.
    static func remove(_ path: String) throws(FileSystemError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw FileSystemError(operation: "remove", path: path, code: errno) }
        try AtomicFile.syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// The bytes of a regular file of at most `limit` bytes; nil when there is none. Throws a
    /// sentence for anything else (a directory, a FIFO, too large, unreadable).
    static func read(_ path: String, limit: Int) throws(ReadProblem) -> [UInt8]? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw ReadProblem("cannot be reached: \(String(cString: strerror(errno)))")
        }
        if info.st_mode & S_IFMT == S_IFLNK { throw ReadProblem("it is a symbolic link; put the file itself there") }
        if let kind = Settings.notRegular(info) { throw ReadProblem("it is \(kind), not a text file") }
        if info.st_size > limit { throw ReadProblem("the file is \(info.st_size) bytes; at most \(limit) are taken") }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw ReadProblem("cannot be read: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= limit {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ReadProblem("cannot be read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        guard bytes.count <= limit else { throw ReadProblem("the file is over \(limit) bytes; at most \(limit) are taken") }
        return bytes
    }

    struct ReadProblem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
