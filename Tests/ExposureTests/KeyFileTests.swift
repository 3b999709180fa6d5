import Foundation
import Testing
@testable import Exposure

#if canImport(Glibc)
import Glibc
#endif

/// Key files read from disk without holding them (issue 24 item 10): what is not a regular file is
/// refused by name before it is opened, zip64 is named, and a file's size does not matter.
struct KeyFileTests {
    static let zip64Refusal = ExposureFileError.badZip("zip64 archives are not key export files")

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The offset of the end of central directory of a zip the tests wrote (no comment).
    static func eocd(_ zip: [UInt8]) -> Int { zip.count - 22 }

    /// Where the central directory of such a zip starts.
    static func directory(_ zip: [UInt8]) -> Int { Int(ZipReader.u32(zip, eocd(zip) + 16)) }

    @Test func zip64MarkersAreNamed() throws {
        let zip = KeyExportTests.file().zip()
        // Entry count all ones, as a zip64 archive writes it.
        var counted = zip
        counted.replaceSubrange((Self.eocd(zip) + 8)..<(Self.eocd(zip) + 12), with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: Self.zip64Refusal) { try ReadExport(zip: counted) }
        // Central directory offset all ones.
        var offset = zip
        offset.replaceSubrange((Self.eocd(zip) + 16)..<(Self.eocd(zip) + 20), with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: Self.zip64Refusal) { try ReadExport(zip: offset) }
        // A zip64 end of central directory locator just before the end of central directory.
        var located = Array(zip[..<Self.eocd(zip)])
        located += ZipWriter.le32(0x0706_4b50) + ZipWriter.le32(0) + [UInt8](repeating: 0, count: 8) + ZipWriter.le32(1)
        located += zip[Self.eocd(zip)...]
        #expect(throws: Self.zip64Refusal) { try ReadExport(zip: located) }
        // A member whose sizes are all ones (they are in its zip64 extra field).
        var member = zip
        let directory = Self.directory(zip)
        member.replaceSubrange((directory + 20)..<(directory + 28), with: [UInt8](repeating: 0xFF, count: 8))
        #expect(throws: Self.zip64Refusal) { try ReadExport(zip: member) }
        // The file itself still reads.
        let whole = try ReadExport(zip: zip)
        #expect(whole.keys.count == 2)
    }

    @Test func notRegularFilesAreRefusedUnopened() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: ExposureFileError.notAFile("a directory")) { try KeyFile.read(dir.path) { _, _ in } }
        #expect(ExposureFileError.notAFile("a directory").description == "is a directory, not a key export file (.zip)")
        // A FIFO with no writer: opened for reading it would wait for ever.
        let fifo = dir.appendingPathComponent("keys.zip").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: ExposureFileError.notAFile("a FIFO (named pipe)")) { try KeyFile.read(fifo) { _, _ in } }
        #expect(throws: ExposureFileError.notAFile("a character device")) { try KeyFile.read("/dev/null") { _, _ in } }
        #expect(throws: ExposureFileError.unreadable("No such file or directory")) { try KeyFile.read(dir.appendingPathComponent("absent.zip").path) { _, _ in } }
        // A symbolic link to a key file is the key file.
        let file = dir.appendingPathComponent("real.zip")
        try Data(KeyExportTests.file().zip()).write(to: file)
        let link = dir.appendingPathComponent("link.zip").path
        #expect(symlink(file.path, link) == 0)
        let linked = try KeyFile.read(link) { _, _ in }
        #expect(linked.keyCount == 2)
    }

    /// A zip whose members are at its start and whose central directory is 3 GB later, past a
    /// hole (a sparse file): read by offset, the hole is never read.
    @Test func hugeSparseFileIsReadByOffset() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let zip = KeyExportTests.file().zip()
        let directory = Self.directory(zip)
        let far = 3 << 30
        var tail = Array(zip[directory...])
        tail.replaceSubrange((tail.count - 6)..<(tail.count - 2), with: ZipWriter.le32(UInt32(far)))
        let path = dir.appendingPathComponent("huge.zip").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(zip[..<directory])))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(far))
        try handle.write(contentsOf: Data(tail))
        try handle.close()
        var keys = 0
        let export = try KeyFile.read(path) { _, _ in keys += 1 }
        #expect(keys == 3 && export.keyCount == 2 && export.revisedKeyCount == 1 && export.region == "GB")
        try export.verify(with: KeyExportTests.verificationKeys)
        // The same size of nothing but the hole: refused from its last 64 KiB.
        let junk = dir.appendingPathComponent("junk.zip").path
        #expect(FileManager.default.createFile(atPath: junk, contents: nil))
        #expect(truncate(junk, off_t(far)) == 0)
        #expect(throws: ExposureFileError.badZip("no end of central directory: not a zip file, or truncated")) { try KeyFile.read(junk) { _, _ in } }
    }

    @Test func oversizedCentralDirectoryIsNotRead() throws {
        var zip = KeyExportTests.file().zip()
        // A directory claimed to take 2 MiB starting at 0 in a file padded to hold it.
        let eocd = Array(zip[Self.eocd(zip)...])
        zip = Array(zip[..<Self.eocd(zip)]) + [UInt8](repeating: 0, count: 2 << 20) + eocd
        let at = zip.count - 22
        zip.replaceSubrange((at + 12)..<(at + 20), with: ZipWriter.le32(UInt32(2 << 20)) + ZipWriter.le32(0))
        #expect(throws: ExposureFileError.badZip("the central directory takes \(2 << 20) bytes; at most \(1 << 20) are read")) {
            try ReadExport(zip: zip)
        }
    }
}
