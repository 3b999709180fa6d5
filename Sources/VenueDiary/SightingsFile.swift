import Glibc

/// Why a sightings file could not be read (as opposed to a row that is wrong in it).
public struct SightingsFileError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var problem: String
    /// The file does not exist (sysexits EX_NOINPUT) rather than failing to read.
    public var isMissing: Bool
    /// The file is not the one the first pass checked: it was written to, truncated or replaced
    /// since (or while it was read). What was read of it before is kept; nothing more is.
    public var hasChanged = false

    public var description: String { "\(path): \(problem)" }

    /// A file that changed since `scanned`: `now` is what it is now (nil when only its rows
    /// told, `detail` then says how).
    static func changed(
        _ path: String, since scanned: SightingsFile.Identity, now: SightingsFile.Identity?, detail: String? = nil, whileChecked: Bool = false
    ) -> SightingsFileError {
        let size = now?.size ?? scanned.size
        var how = [size == scanned.size ? "size still \(size) bytes" : "size \(scanned.size) → \(size) bytes"]
        if let now, now.device != scanned.device || now.inode != scanned.inode {
            how.insert("replaced by another file", at: 0)
        } else if let now, now.size == scanned.size, now.modified != scanned.modified {
            how.insert("written to", at: 0)
        }
        if let detail { how.append(detail) }
        let problem = whileChecked
            ? "changed while it was checked (\(how.joined(separator: ", "))); nothing was written: replay it again"
            : "changed since it was checked (\(how.joined(separator: ", "))); nothing more is read: replay it again to complete"
        return SightingsFileError(path: path, problem: problem, isMissing: false, hasChanged: true)
    }
}

/// A sightings file (``SightingsCSV``) read without holding it, for `venue-beacon diary replay
/// FILE`: a first pass (``scan(_:)``) reads every line, checks it and notes whether the times
/// are in order, so that nothing is written unless every line is good; a second pass
/// (``forEachSighting(of:_:)``) hands the sightings over in time order. A file in time order
/// (the usual case) is read in a fixed amount of memory; one out of order costs 16 bytes a
/// sighting (its time and where its line starts; 24 at the peak, while they are sorted), and each
/// line is read again from there.
///
/// The file must stay as it was between the two passes. The first pass notes its identity
/// (device, inode, size, modification time: ``Identity``); the second checks it on the descriptor
/// it reads before it hands over anything and again after every chunk (every 1 MiB, or 4,096
/// lines of a file out of order), and counts what it reads against the first pass (bytes, rows,
/// and that every row still parses, in the order found). A file written to, truncated, grown or
/// replaced meanwhile throws ``SightingsFileError`` (``SightingsFileError/hasChanged``) and nothing
/// more is read. Modification times are as fine as the file system keeps them (on Linux, a
/// scheduler tick): a same-size rewrite within one tick of the previous write is noticed only
/// when its rows differ in number or no longer parse.
public enum SightingsFile {
    /// The longest line read: a 1,024-byte payload is 2,048 hex digits; quotes and spaces aside.
    static let maximumLineBytes = 8 * 1024
    static let chunkBytes = 1 << 20

    /// What the first pass found.
    public struct Scan: Sendable {
        public var path: String
        public var sightings = 0
        public var first = Double.infinity
        public var last = -Double.infinity
        public var inOrder = true
        /// The file as the first pass read it.
        public var identity = Identity()
    }

    /// What tells one version of a file from another without reading it: fstat(2)'s device,
    /// inode, size and modification time.
    public struct Identity: Sendable, Equatable {
        public var device: UInt64 = 0
        public var inode: UInt64 = 0
        public var size: Int64 = 0
        /// Seconds and nanoseconds.
        public var modified = Modified()
        /// A regular file (not a FIFO, device or directory: those cannot be read twice alike).
        public var isRegularFile = false

        public struct Modified: Sendable, Equatable {
            public var seconds: Int64 = 0
            public var nanoseconds: Int64 = 0
        }

        public init() {}

        init(_ s: stat) {
            device = UInt64(s.st_dev)
            inode = UInt64(s.st_ino)
            size = Int64(s.st_size)
            modified = Modified(seconds: Int64(s.st_mtim.tv_sec), nanoseconds: Int64(s.st_mtim.tv_nsec))
            isRegularFile = s.st_mode & S_IFMT == S_IFREG
        }

        /// The identity of the file `fd` reads.
        static func of(_ fd: Int32, path: String) throws -> Identity {
            var s = stat()
            guard fstat(fd, &s) == 0 else {
                throw SightingsFileError(path: path, problem: "cannot read the sightings file: \(String(cString: strerror(errno)))", isMissing: false)
            }
            return Identity(s)
        }
    }

    /// The second pass over a file that ``scan(_:)`` has checked: every sighting in time order,
    /// equal times in file order. Throws ``SightingsFileError`` when the file cannot be read
    /// again or has changed since the scan.
    public static func forEachSighting(of scan: Scan, _ body: (Sighting) throws -> Void) throws {
        let fd = try open(scan.path)
        defer { close(fd) }
        if scan.inOrder {
            var last = -Double.infinity
            try forEachSightingAgain(fd, of: scan) { sighting, _ in
                // Out of order now: not the rows the first pass read.
                guard sighting.time >= last else { throw changed(scan, detail: "rows out of the order checked") }
                last = sighting.time
                try body(sighting)
            }
        } else {
            try forEachOutOfOrder(fd, of: scan, body)
        }
    }

    /// Every sighting of the file `fd` reads, with where its line starts, once the file is known
    /// to be the one `scan` read: its identity checked before the first line and after every
    /// chunk, its bytes and rows counted against the scan's. A row that no longer parses means
    /// the same.
    private static func forEachSightingAgain(_ fd: Int32, of scan: Scan, _ body: (Sighting, Int64) throws -> Void) throws {
        try check(fd, against: scan)
        var reader = SightingsCSV.LineReader()
        var rows = 0
        try forEachLine(fd, path: scan.path, afterRead: { bytes in
            try check(fd, against: scan)
            if bytes > scan.identity.size { throw changed(scan, detail: "more than \(scan.identity.size) bytes read") }
        }) { line, number, offset in
            let sighting: Sighting?
            do {
                sighting = try reader.read(line, number: number)
            } catch {
                throw changed(scan, detail: "line \(number) is not the line checked")
            }
            guard let sighting else { return }
            rows += 1
            guard rows <= scan.sightings else { throw changed(scan, detail: "more than \(scan.sightings) rows") }
            try body(sighting, offset)
        }
        try check(fd, against: scan)
        guard rows == scan.sightings else { throw changed(scan, detail: "\(rows) rows where \(scan.sightings) were checked") }
    }

    /// Throws unless the file `fd` reads is still the one `scan` read.
    private static func check(_ fd: Int32, against scan: Scan) throws {
        let now = try Identity.of(fd, path: scan.path)
        guard now == scan.identity else {
            throw SightingsFileError.changed(scan.path, since: scan.identity, now: now)
        }
    }

    private static func changed(_ scan: Scan, detail: String) -> SightingsFileError {
        SightingsFileError.changed(scan.path, since: scan.identity, now: nil, detail: detail)
    }

    /// The first pass: every line read and checked. Throws ``SightingsCSVError`` for the first
    /// bad line, ``SightingsFileError`` when the file cannot be read.
    /// Sightings later than `now` (plus ``SightingsCSV/futureToleranceSeconds``) are refused.
    public static func scan(_ path: String, now: Double) throws -> Scan {
        var scan = Scan(path: path)
        var reader = SightingsCSV.LineReader(now: now)
        let fd = try open(path)
        defer { close(fd) }
        let before = try Identity.of(fd, path: path)
        guard before.isRegularFile else {
            throw SightingsFileError(
                path: path, problem: "not a regular file: replay reads the file twice; save the sightings to a file and replay that",
                isMissing: false)
        }
        var bytes: Int64 = 0
        try forEachLine(fd, path: path, afterRead: { bytes = $0 }) { line, number, _ in
            guard let sighting = try reader.read(line, number: number) else { return }
            if sighting.time < scan.last { scan.inOrder = false }
            scan.sightings += 1
            scan.first = min(scan.first, sighting.time)
            scan.last = max(scan.last, sighting.time)
        }
        try reader.finish()
        // Written to while it was read: what was checked is no one version of the file.
        let after = try Identity.of(fd, path: path)
        guard after == before, bytes == after.size else {
            throw SightingsFileError.changed(
                path, since: before, now: after, detail: bytes == after.size ? nil : "\(bytes) bytes read", whileChecked: true)
        }
        scan.identity = after
        return scan
    }

    /// Sorts (time, line start) pairs, keeping the file order of equal times, then reads each
    /// line again where it starts, from the same descriptor, the file's identity checked every
    /// 4,096 lines. A line that no longer parses, or parses to another time, is another file.
    /// The index is sized once from the scan's count (grown by doubling it would reach up to
    /// twice that); the sort borrows half as much again while it runs.
    private static func forEachOutOfOrder(_ fd: Int32, of scan: Scan, _ feed: (Sighting) throws -> Void) throws {
        var index: [(time: Double, offset: Int64)] = []
        index.reserveCapacity(scan.sightings)
        try forEachSightingAgain(fd, of: scan) { sighting, offset in index.append((sighting.time, offset)) }
        index.sort { ($0.time, $0.offset) < ($1.time, $1.offset) }
        var buffer = [UInt8](repeating: 0, count: maximumLineBytes + 1)
        var lineReader = SightingsCSV.LineReader()
        _ = try lineReader.read(Array(SightingsCSV.header.utf8)[...], number: 1)
        for (i, entry) in index.enumerated() {
            if i % 4096 == 0 { try check(fd, against: scan) }
            var n: Int
            repeat {
                n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(entry.offset)) }
            } while n < 0 && errno == EINTR
            guard n >= 0 else {
                throw SightingsFileError(path: scan.path, problem: "cannot read the sightings file: \(String(cString: strerror(errno)))", isMissing: false)
            }
            let line = buffer[..<n].prefix { $0 != UInt8(ascii: "\n") }
            // Line numbers are not known here; the first pass has checked every line.
            guard let sighting = try? lineReader.read(line, number: 2), sighting.time == entry.time else {
                try check(fd, against: scan)
                throw changed(scan, detail: "the line at byte \(entry.offset) is not the line checked")
            }
            try feed(sighting)
        }
    }

    private static func open(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SightingsFileError(
                path: path, problem: "cannot read the sightings file: \(String(cString: strerror(errno)))", isMissing: errno == ENOENT)
        }
        return fd
    }

    /// A line past the limit: usually a file whose lines end in CR alone (classic Mac OS), which
    /// reads as one long line.
    static func tooLong(_ line: ArraySlice<UInt8>, number: Int) -> SightingsCSVError {
        if line.contains(UInt8(ascii: "\r")) {
            return SightingsCSVError(line: number, problem: "the lines end in CR alone (classic Mac OS line endings); save the file with LF or CRLF line endings")
        }
        return SightingsCSVError(line: number, problem: "the line is longer than \(maximumLineBytes) bytes")
    }

    /// Calls `body` with each line (without its `\n`), its 1-based number and the offset of its
    /// first byte, reading the file in 1 MiB chunks; `afterRead` with the bytes read so far after
    /// each chunk is read, before its lines are handed over.
    static func forEachLine(
        _ fd: Int32, path: String, afterRead: (Int64) throws -> Void, _ body: (ArraySlice<UInt8>, Int, Int64) throws -> Void
    ) throws {
        var buffer = [UInt8](repeating: 0, count: chunkBytes)
        var carry: [UInt8] = []
        var lineNumber = 0
        var lineStart: Int64 = 0
        var fileOffset: Int64 = 0
        func emit(_ line: ArraySlice<UInt8>) throws {
            lineNumber += 1
            guard line.count <= maximumLineBytes else { throw tooLong(line, number: lineNumber) }
            try body(line, lineNumber, lineStart)
        }
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SightingsFileError(path: path, problem: "cannot read the sightings file: \(String(cString: strerror(errno)))", isMissing: false)
            }
            if n == 0 { break }
            try afterRead(fileOffset + Int64(n))
            var start = 0
            for i in 0..<n where buffer[i] == UInt8(ascii: "\n") {
                if carry.isEmpty {
                    try emit(buffer[start..<i])
                } else {
                    carry.append(contentsOf: buffer[start..<i])
                    try emit(carry[...])
                    carry.removeAll(keepingCapacity: true)
                }
                lineStart = fileOffset + Int64(i + 1)
                start = i + 1
            }
            carry.append(contentsOf: buffer[start..<n])
            if carry.count > maximumLineBytes { throw tooLong(carry[...], number: lineNumber + 1) }
            fileOffset += Int64(n)
        }
        if !carry.isEmpty { try emit(carry[...]) }
    }
}
