import Foundation
import Testing
@testable import VenueDiary

/// `diary replay` reads its file in two streamed passes (``SightingsFile``): the second must hand
/// over what parsing the whole file and sorting it by time gives, for files that cross many read
/// chunks, in and out of time order (the replay itself: VenueNodeTests' SightingsReplayTests).
@Suite struct SightingsFileTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    /// About 2.6 MB: lines cross the 1 MiB chunk boundaries at arbitrary points.
    func rows(shuffled: Bool) -> String {
        var random = SystemRandomNumberGenerator()
        var lines: [String] = []
        for i in 0..<40_000 {
            let phone = i % 700
            let padding = String(repeating: "ab", count: phone % 23)
            lines.append("\(1_795_197_600 + i / 4).\(i % 4 * 25),advert,\(String(format: "%06x", phone))\(padding),-\(50 + phone % 40)")
        }
        if shuffled { lines.shuffle(using: &random) }
        return "time,kind,payload,rssi\r\n" + lines.joined(separator: "\r\n") + "\r\n"
    }

    @Test(arguments: [false, true])
    func theSecondPassHandsOverEverySightingInTimeOrder(shuffled: Bool) throws {
        let text = rows(shuffled: shuffled)
        let file = dir.path("s.csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))

        let parsed = try SightingsCSV.parse(Array(text.utf8))
        let expected = parsed.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        let scan = try SightingsFile.scan(file, now: .infinity)
        var streamed: [Sighting] = []
        try SightingsFile.forEachSighting(of: scan) { streamed.append($0) }

        #expect(scan.inOrder == !shuffled)
        #expect(scan.sightings == 40_000 && scan.first == expected.first?.time && scan.last == expected.last?.time)
        #expect(streamed == expected)
    }

    @Test func aBadLineAfterTheFirstChunkIsFoundByTheFirstPass() throws {
        var text = rows(shuffled: false)
        text += "1795300000,gaen,zz,-60\n"
        let file = dir.path("s.csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: SightingsCSVError(line: 40_002, problem: "payload has a character that is not a hex digit: 'z'")) {
            try SightingsFile.scan(file, now: .infinity)
        }
    }

    @Test func aLineLongerThanAnyValidRowIsRefused() throws {
        let file = dir.path("s.csv")
        let long = String(repeating: "a", count: 3 * (1 << 20))
        try Data("time,kind,payload,rssi\n1795197600,gaen,\(long),-60\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: SightingsCSVError(line: 2, problem: "the line is longer than 8192 bytes")) { try SightingsFile.scan(file, now: .infinity) }
    }

    /// A file saved with classic Mac OS line endings reads as one long line: say what it is.
    @Test func crOnlyLineEndingsAreNamed() throws {
        let file = dir.path("s.csv")
        let text = "time,kind,payload,rssi\r" + String(repeating: "1795197600,herald,aa01,-60\r", count: 400)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: SightingsCSVError(line: 1, problem: "the lines end in CR alone (classic Mac OS line endings); save the file with LF or CRLF line endings")) {
            try SightingsFile.scan(file, now: .infinity)
        }
    }

    /// Replay reads its file twice: what cannot be read twice alike (a directory here; a FIFO or
    /// a device the same) is refused by the first pass, before anything is written.
    @Test func aFileThatIsNotRegularIsRefused() throws {
        let error = thrownError(SightingsFileError.self) { try SightingsFile.scan(dir.path(""), now: .infinity) }
        #expect(error?.problem == "not a regular file: replay reads the file twice; save the sightings to a file and replay that")
        #expect(error?.isMissing == false && error?.hasChanged == false)
    }

    @Test func aMissingFileSaysSo() throws {
        #expect(throws: SightingsFileError.self) { try SightingsFile.scan(dir.path("absent.csv"), now: .infinity) }
        do {
            _ = try SightingsFile.scan(dir.path("absent.csv"), now: .infinity)
        } catch let error as SightingsFileError {
            #expect(error.isMissing)
        }
    }
}

/// How a file is changed between (or during) replay's two passes.
enum FileChange: String, CaseIterable, CustomTestStringConvertible {
    case grown, shrunk, replacedBySameSize, writtenInPlaceSameSize
    var testDescription: String { rawValue }
}

/// A file that changes after the first pass is not read further: the second pass notices before
/// it hands over a sighting (its fstat identity, its bytes and rows against the scan's) and
/// throws ``SightingsFileError`` saying so; when it changes midway, nothing after the chunk
/// being read is handed over. (The tester's case: 196,025 visits written and exit 70.)
@Suite struct SightingsFileChangeTests {
    let dir: TemporaryDirectory
    let file: String
    init() throws {
        dir = try TemporaryDirectory()
        file = dir.path("s.csv")
    }

    /// About 2.6 MB (three 1 MiB chunks), as SightingsFileTests' rows.
    func write(shuffled: Bool) throws -> String {
        var random = SystemRandomNumberGenerator()
        var lines: [String] = []
        for i in 0..<40_000 {
            let phone = i % 700
            lines.append("\(1_795_197_600 + i / 4),advert,\(String(format: "%06x", phone))\(String(repeating: "ab", count: phone % 23)),-\(50 + phone % 40)")
        }
        if shuffled { lines.shuffle(using: &random) }
        let text = "time,kind,payload,rssi\n" + lines.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        // An old modification time, so that a write in place now is always a later one.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: file)
        return text
    }

    /// Changes the file; returns its new size.
    @discardableResult
    func change(_ how: FileChange, _ text: String) throws -> Int {
        let size = text.utf8.count
        switch how {
        case .grown:
            let handle = try #require(FileHandle(forWritingAtPath: file))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("1795300000,advert,abcd,-60\n".utf8))
            try handle.close()
            return size + 27
        case .shrunk:
            #expect(truncate(file, off_t(size / 2)) == 0)
            return size / 2
        case .replacedBySameSize:
            // Another file of the same size (one RSSI digit differs) renamed over it.
            let other = dir.path("other.csv")
            try Data(Self.sameSizeVariant(text).utf8).write(to: URL(fileURLWithPath: other))
            #expect(rename(other, file) == 0)
            return size
        case .writtenInPlaceSameSize:
            let handle = try #require(FileHandle(forWritingAtPath: file))
            try handle.write(contentsOf: Data(Self.sameSizeVariant(text).utf8))
            try handle.close()
            return size
        }
    }

    static func sameSizeVariant(_ text: String) -> String {
        guard let range = text.range(of: ",-50\n") else { return text }
        return text.replacingCharacters(in: range, with: ",-59\n")
    }

    @Test(arguments: [false, true], FileChange.allCases)
    func aFileChangedBetweenThePassesHandsOverNothing(shuffled: Bool, how: FileChange) throws {
        let text = try write(shuffled: shuffled)
        let scan = try SightingsFile.scan(file, now: .infinity)
        #expect(scan.inOrder == !shuffled && scan.identity.size == Int64(text.utf8.count))
        let newSize = try change(how, text)

        var handedOver = 0
        let error = thrownError(SightingsFileError.self) {
            try SightingsFile.forEachSighting(of: scan) { _ in handedOver += 1 }
        }
        #expect(handedOver == 0)
        #expect(error?.hasChanged == true)
        #expect(error?.isMissing == false)
        let size = newSize == text.utf8.count ? "size still \(newSize) bytes" : "size \(text.utf8.count) → \(newSize) bytes"
        #expect(error?.description.hasPrefix("\(file): changed since it was checked (") == true, "\(String(describing: error))")
        #expect(error?.description.contains(size) == true, "\(String(describing: error))")
        #expect(error?.description.hasSuffix("; nothing more is read: replay it again to complete") == true, "\(String(describing: error))")
        switch how {
        case .replacedBySameSize: #expect(error?.description.contains("replaced by another file") == true)
        case .writtenInPlaceSameSize: #expect(error?.description.contains("written to") == true)
        case .grown, .shrunk: break
        }
    }

    /// Changed while the second pass reads it: what is read after the change is never handed
    /// over (in order: only the rows of the chunk read before it; out of order: the index is
    /// built before any sighting is handed over, the identity is checked again every 4,096 lines
    /// and each line read again must read as before). A file renamed over is not a change to
    /// the descriptor being read: the version checked is read to its end.
    @Test(arguments: [false, true], FileChange.allCases)
    func aFileChangedDuringTheSecondPassStopsIt(shuffled: Bool, how: FileChange) throws {
        let text = try write(shuffled: shuffled)
        let scan = try SightingsFile.scan(file, now: .infinity)
        var handedOver = 0
        var changedOnce = false
        func replay() throws {
            try SightingsFile.forEachSighting(of: scan) { _ in
                handedOver += 1
                if !changedOnce {
                    changedOnce = true
                    try change(how, text)
                }
            }
        }
        if how == .replacedBySameSize {
            try replay()
            #expect(handedOver == 40_000)
            return
        }
        let error = thrownError(SightingsFileError.self) { try replay() }
        #expect(error?.hasChanged == true, "\(String(describing: error))")
        if shuffled {
            #expect(handedOver >= 1 && handedOver <= 4_096)
        } else {
            // The rows of the first 1 MiB chunk (less the header), and not one more.
            let firstChunkRows = text.utf8.prefix(SightingsFile.chunkBytes).filter { $0 == UInt8(ascii: "\n") }.count - 1
            #expect(handedOver == firstChunkRows)
        }
    }

    /// The unchanged file still replays whole (the checks find nothing), with its identity noted.
    @Test(arguments: [false, true])
    func anUnchangedFileIsHandedOverWhole(shuffled: Bool) throws {
        _ = try write(shuffled: shuffled)
        let scan = try SightingsFile.scan(file, now: .infinity)
        var handedOver = 0
        try SightingsFile.forEachSighting(of: scan) { _ in handedOver += 1 }
        #expect(handedOver == 40_000)
        var s = stat()
        #expect(stat(file, &s) == 0)
        #expect(scan.identity.inode == UInt64(s.st_ino) && scan.identity.modified.seconds == 1_600_000_000)
    }
}
