import Glibc

/// Why a sightings file could not be read (as opposed to a row that is wrong in it).
public struct SightingsFileError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var problem: String
    /// The file does not exist (sysexits EX_NOINPUT) rather than failing to read.
    public var isMissing: Bool

    public var description: String { "\(path): \(problem)" }
}

/// A sightings file (``SightingsCSV``) read without holding it, for `venue-beacon diary replay
/// FILE`: a first pass (``scan(_:)``) reads every line, checks it and notes whether the times
/// are in order, so that nothing is written unless every line is good; a second pass
/// (``forEachSighting(of:_:)``) hands the sightings over in time order. A file in time order
/// (the usual case) is read in a fixed amount of memory; one out of order costs 16 bytes a
/// sighting (its time and where its line starts; 24 at the peak, while they are sorted), and each
/// line is read again from there.
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
    }

    /// The second pass over a file that ``scan(_:)`` has checked: every sighting in time order,
    /// equal times in file order. Throws ``SightingsFileError`` when the file cannot be read
    /// again or has changed since the scan.
    public static func forEachSighting(of scan: Scan, _ body: (Sighting) throws -> Void) throws {
        if scan.inOrder {
            var reader = SightingsCSV.LineReader()
            try forEachLine(scan.path) { line, number, _ in
                if let sighting = try reader.read(line, number: number) { try body(sighting) }
            }
        } else {
            try forEachOutOfOrder(scan.path, count: scan.sightings, body)
        }
    }

    /// The first pass: every line read and checked. Throws ``SightingsCSVError`` for the first
    /// bad line, ``SightingsFileError`` when the file cannot be read.
    /// Sightings later than `now` (plus ``SightingsCSV/futureToleranceSeconds``) are refused.
    public static func scan(_ path: String, now: Double) throws -> Scan {
        var scan = Scan(path: path)
        var reader = SightingsCSV.LineReader(now: now)
        try forEachLine(path) { line, number, _ in
            guard let sighting = try reader.read(line, number: number) else { return }
            if sighting.time < scan.last { scan.inOrder = false }
            scan.sightings += 1
            scan.first = min(scan.first, sighting.time)
            scan.last = max(scan.last, sighting.time)
        }
        try reader.finish()
        return scan
    }

    /// Sorts (time, line start) pairs, keeping the file order of equal times, then reads each
    /// line again where it starts.
    /// The index is sized once from the scan's count (grown by doubling it would reach up to
    /// twice that); the sort borrows half as much again while it runs.
    private static func forEachOutOfOrder(_ path: String, count: Int, _ feed: (Sighting) throws -> Void) throws {
        var index: [(time: Double, offset: Int64)] = []
        index.reserveCapacity(count)
        var reader = SightingsCSV.LineReader()
        try forEachLine(path) { line, number, offset in
            if let sighting = try reader.read(line, number: number) { index.append((sighting.time, offset)) }
        }
        index.sort { ($0.time, $0.offset) < ($1.time, $1.offset) }
        let fd = try open(path)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: maximumLineBytes + 1)
        var lineReader = SightingsCSV.LineReader()
        _ = try lineReader.read(Array(SightingsCSV.header.utf8)[...], number: 1)
        for entry in index {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(entry.offset)) }
            guard n > 0 else { throw SightingsFileError(path: path, problem: "the file changed while it was replayed", isMissing: false) }
            let line = buffer[..<n].prefix { $0 != UInt8(ascii: "\n") }
            // Line numbers are not known here; the first pass has checked every line.
            guard let sighting = try lineReader.read(line, number: 2) else { continue }
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
    /// first byte, reading the file in 1 MiB chunks.
    static func forEachLine(_ path: String, _ body: (ArraySlice<UInt8>, Int, Int64) throws -> Void) throws {
        let fd = try open(path)
        defer { close(fd) }
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
