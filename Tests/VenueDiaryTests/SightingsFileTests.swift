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

    @Test func aMissingFileSaysSo() throws {
        #expect(throws: SightingsFileError.self) { try SightingsFile.scan(dir.path("absent.csv"), now: .infinity) }
        do {
            _ = try SightingsFile.scan(dir.path("absent.csv"), now: .infinity)
        } catch let error as SightingsFileError {
            #expect(error.isMissing)
        }
    }
}
