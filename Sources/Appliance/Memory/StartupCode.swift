import Foundation
import Glibc

/// Hands the executable's code pages back to the kernel once start-up is over.
///
/// Start-up runs code a running node never runs again (config parsing, the argument parser,
/// Swift metadata and conformance lookups, SQLite and GRDB setup, migrations), and the kernel
/// maps the executable 64 KB around each page fault, so most of the 15–16 MB text stays resident
/// although a node at work touches about 2 MB of it (BENCHMARKS.md, "`run` process").
/// `madvise(MADV_PAGEOUT)` on the executable's own mappings reclaims those clean file pages at
/// once; any page needed later is read back from the file like any other page fault.
/// Anonymous memory (the heap, stacks) is never touched.
public enum StartupCode {
    /// One mapping of the executable, from `/proc/self/maps`.
    public struct Mapping: Equatable, Sendable {
        public var start: UInt
        public var end: UInt
        public var permissions: String
        public var bytes: UInt { end - start }
    }

    /// The executable's file-backed mappings (code and read-only data) in `/proc/PID/maps` text:
    /// lines whose path is `executable` and whose permissions are not writable (writable
    /// mappings hold relocated data and `.bss`, which paging out would only move to swap).
    public static func mappings(maps: String, executable: String) -> [Mapping] {
        var found: [Mapping] = []
        for line in maps.split(separator: "\n") {
            // start-end perms offset dev inode path (the path may contain spaces)
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].trimmingCharacters(in: .whitespaces) == executable else { continue }
            let permissions = String(fields[1])
            guard permissions.count == 4, !permissions.contains("w") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), start < end else {
                continue
            }
            found.append(Mapping(start: start, end: end, permissions: permissions))
        }
        return found
    }

    /// What ``pageOut()`` did.
    public struct Report: Equatable, Sendable {
        /// The executable's read-only and code mappings advised.
        public var mappings: [Mapping]
        /// Bytes advised (mapped, not necessarily resident).
        public var bytes: UInt { mappings.reduce(0) { $0 + $1.bytes } }
        /// The first `madvise` error (`errno`), if any; the other mappings are still advised.
        public var error: Int32?
    }

    /// Pages out this process's executable mappings that are not writable. Costs a read of
    /// `/proc/self/maps` and one `madvise` a mapping; nil when `/proc` cannot tell.
    public static func pageOut() -> Report? {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8),
            let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        else { return nil }
        var report = Report(mappings: mappings(maps: maps, executable: executable), error: nil)
        for mapping in report.mappings {
            if madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), Int(mapping.bytes), MADV_PAGEOUT) != 0, report.error == nil {
                report.error = errno
            }
        }
        return report
    }
}
