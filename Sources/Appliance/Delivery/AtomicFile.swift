import Foundation
import Glibc

/// A failed file-system call: which call, on which path, and errno.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var code: Int32

    public var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}

/// Writes a whole file so that a reader (or a power cut) sees either the old file or the new
/// one, never a torn one: a temporary file in the same directory, fsync, rename over the
/// target, fsync the directory so the rename itself is durable.
enum AtomicFile {
    static func write(_ data: Data, to path: String, mode: mode_t) throws(FileSystemError) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileSystemError(operation: "create", path: temporary, code: errno) }
        do throws(FileSystemError) {
            // The service runs with UMask=0077; the mode asked for is the mode meant.
            guard fchmod(fd, mode) == 0 || errno == EPERM else { throw FileSystemError(operation: "chmod", path: temporary, code: errno) }
            try writeAll(fd, data, path: temporary)
            guard fsync(fd) == 0 else { throw FileSystemError(operation: "fsync", path: temporary, code: errno) }
            guard close(fd) == 0 else {
                let code = errno
                unlink(temporary)
                throw FileSystemError(operation: "close", path: temporary, code: code)
            }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileSystemError(operation: "rename", path: path, code: code)
        }
        try syncDirectory(directory)
    }

    /// Makes renames and unlinks in `directory` durable. File systems that cannot fsync a
    /// directory (EINVAL) have no directory metadata to sync.
    static func syncDirectory(_ directory: String) throws(FileSystemError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(operation: "open", path: directory, code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 || errno == EINVAL else { throw FileSystemError(operation: "fsync", path: directory, code: errno) }
    }

    private static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(FileSystemError) {
        var failure: Int32 = 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += n
            }
        }
        if failure != 0 { throw FileSystemError(operation: "write", path: path, code: failure) }
    }
}
