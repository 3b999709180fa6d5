import Foundation
import Glibc

/// A failed file-system call: which call, on which path, and errno.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32

    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    public var description: String { "cannot \(operation) \(path): \(String(cString: strerror(code)))" }

    /// True when the bytes could not be written or made durable (disk full, I/O error), as
    /// opposed to the file not being creatable at all: sysexits' EX_IOERR rather than EX_CANTCREAT.
    /// A full disk is a write failure whichever call met it (creating a file needs an inode).
    public var isWriteFailure: Bool { ["write", "fsync", "close"].contains(operation) || [ENOSPC, EDQUOT, EIO].contains(code) }
}

/// Writes a whole file so that a reader (or a power cut) sees either the old file or the new
/// one, never a torn one: a temporary file in the same directory, fsync, rename over the
/// target, fsync the directory so the rename itself is durable. The file gets exactly `mode`,
/// whatever the process's umask.
enum AtomicFile {
    static func write(_ data: Data, to path: String, mode: mode_t) throws(FileSystemError) {
        let file = try Writer(replacing: path, mode: mode)
        do throws(FileSystemError) {
            try file.write(data)
            try file.commit()
        } catch {
            file.abandon()
            throw error
        }
    }

    /// A file being written in place of `path`: nothing is visible at `path` until `commit`.
    final class Writer {
        let path: String
        private let temporary: String
        private var fd: Int32

        init(replacing path: String, mode: mode_t) throws(FileSystemError) {
            self.path = path
            let directory = (path as NSString).deletingLastPathComponent
            let name = (path as NSString).lastPathComponent
            temporary = "\(directory.isEmpty ? "." : directory)/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            guard fd >= 0 else { throw FileSystemError(operation: "create", path: temporary, code: errno) }
            // The mode asked for is the mode meant, whatever the umask (the CLI may run with 022).
            // EPERM: a file system without modes (FAT on a USB stick).
            guard fchmod(fd, mode) == 0 || errno == EPERM else {
                let code = errno
                abandon()
                throw FileSystemError(operation: "chmod", path: temporary, code: code)
            }
        }

        func write(_ bytes: some ContiguousBytes) throws(FileSystemError) {
            try FileDescriptor.writeAll(fd, bytes, path: path)
        }

        /// fsync, rename over `path`, fsync the directory.
        func commit() throws(FileSystemError) {
            guard fsync(fd) == 0 else { throw FileSystemError(operation: "fsync", path: path, code: errno) }
            let closed = close(fd)
            fd = -1
            guard closed == 0 else { throw FileSystemError(operation: "close", path: path, code: errno) }
            guard rename(temporary, path) == 0 else { throw FileSystemError(operation: "rename", path: path, code: errno) }
            try syncDirectory((path as NSString).deletingLastPathComponent)
        }

        /// Removes the temporary file; `path` keeps whatever it held before.
        func abandon() {
            if fd >= 0 { close(fd) }
            fd = -1
            unlink(temporary)
        }
    }

    /// Makes renames and unlinks in `directory` durable. File systems that cannot fsync a
    /// directory (EINVAL) have no directory metadata to sync.
    static func syncDirectory(_ directory: String) throws(FileSystemError) {
        let directory = directory.isEmpty ? "." : directory
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(operation: "open", path: directory, code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 || errno == EINVAL else { throw FileSystemError(operation: "fsync", path: directory, code: errno) }
    }
}

/// Plain `write(2)` until every byte is out.
public enum FileDescriptor {
    public static func writeAll(_ fd: Int32, _ bytes: some ContiguousBytes, path: String) throws(FileSystemError) {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(FileSystemError) in try writeAll(fd, buffer, path: path) } }
        try result.get()
    }

    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(operation: "write", path: path, code: errno)
            }
            offset += n
        }
    }
}
