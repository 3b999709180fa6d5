import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A key export file on disk, read without holding it: what is not a regular file is refused
/// before it is opened (a FIFO opened for reading would wait for a writer), and a regular file is
/// read through ``ZipReader`` by offset (`pread`): its last 64 KiB + 22 bytes, its central
/// directory, then export.bin streamed 64 KiB at a time (read, inflated, hashed and parsed into
/// keys handed on one by one: ``KeyExport/init(zip:key:)``) and export.sig. Neither the file's size
/// nor its number of keys matters: what is held is a few pieces of 64 KiB, one key and export.sig.
public enum KeyFile {
    /// What `mode` is when it is not a regular file ("a directory", "a FIFO (named pipe)", …); nil
    /// for a regular file.
    static func kind(_ mode: mode_t) -> String? {
        switch UInt32(mode) & 0o170_000 {
        case 0o100_000: nil
        case 0o040_000: "a directory"
        case 0o010_000: "a FIFO (named pipe)"
        case 0o020_000: "a character device"
        case 0o060_000: "a block device"
        case 0o140_000: "a socket"
        case 0o120_000: "a symbolic link"
        default: "not a regular file"
        }
    }

    static func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Checks that `path` names a regular file, without opening it.
    public static func check(_ path: String) throws(ExposureFileError) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .unreadable(errnoText(errno)) }
        if let kind = kind(st.st_mode) { throw .notAFile(kind) }
    }

    /// Reads the key export at `path` (see ``KeyFile``), handing each key to `key` as it is read
    /// (with ``KeyExport/init(zip:key:)``'s caveat: drop what was made of them if this throws).
    public static func read(_ path: String, key: (DiagnosisKey, _ revised: Bool) -> Void) throws(ExposureFileError) -> KeyExport {
        try check(path)
        // O_NONBLOCK: should the path have become a FIFO since it was checked, the open does not
        // wait for a writer; fstat of the descriptor then refuses it. (Regular files ignore it.)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(errnoText(errno)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .unreadable(errnoText(errno)) }
        if let kind = kind(st.st_mode) { throw .notAFile(kind) }
        let size = Int(st.st_size)
        let zip = try ZipReader(size: size) { (offset, count) throws(ExposureFileError) in
            try Self.pread(fd, offset: offset, count: count)
        }
        return try KeyExport(zip: zip, key: key)
    }

    /// Exactly `count` bytes at `offset`, or a refusal (the file shrank, or an I/O error).
    static func pread(_ fd: Int32, offset: Int, count: Int) throws(ExposureFileError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        var failure: Int32 = 0
        bytes.withUnsafeMutableBytes { buffer in
            while done < count {
                let n = Glibc.pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n > 0 {
                    done += n
                } else if n == 0 {
                    break
                } else if errno != EINTR {
                    failure = errno
                    break
                }
            }
        }
        if failure != 0 { throw .unreadable(errnoText(failure)) }
        guard done == count else { throw .badZip("the file ended early (truncated while read?)") }
        return bytes
    }
}
