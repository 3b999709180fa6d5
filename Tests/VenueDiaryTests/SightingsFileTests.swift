import Foundation
import Testing
@testable import VenueDiary

/// `diary replay` reads its file in two streamed passes (``SightingsFile``): the result must be
/// the in-memory replay's, for files that cross many read chunks, in and out of time order.
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
            lines.append("\(1_795_197_600 + i / 4).\(i % 4 * 25),gaen,\(String(format: "%06x", phone))\(padding),-\(50 + phone % 40)")
        }
        if shuffled { lines.shuffle(using: &random) }
        return "time,kind,payload,rssi\r\n" + lines.joined(separator: "\r\n") + "\r\n"
    }

    @Test(arguments: [false, true])
    func aStreamedReplayRecordsWhatTheInMemoryReplayRecords(shuffled: Bool) throws {
        let text = rows(shuffled: shuffled)
        let file = dir.path("s.csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))

        let memory = try DiaryStore(path: dir.path("memory.sqlite"))
        let expected = try DiaryReplay.replay(csv: Array(text.utf8), into: memory, settings: settings())
        let streamed = try DiaryStore(path: dir.path("streamed.sqlite"))
        let summary = try SightingsFile.replay(path: file, into: streamed, settings: settings())

        #expect(summary == expected)
        #expect(summary.visits > 500)
        #expect(try streamed.visits() == memory.visits())
        #expect(try SightingsFile.scan(file).inOrder == !shuffled)
    }

    @Test func aBadLineAfterTheFirstChunkIsFoundBeforeAnythingIsWritten() throws {
        var text = rows(shuffled: false)
        text += "1795300000,gaen,zz,-60\n"
        let file = dir.path("s.csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let store = try DiaryStore(path: dir.path("diary.sqlite"))
        #expect(throws: SightingsCSVError(line: 40_002, problem: "payload has a character that is not a hex digit: 'z'")) {
            try SightingsFile.replay(path: file, into: store, settings: settings())
        }
        #expect(try store.visits().isEmpty)
    }

    @Test func aLineLongerThanAnyValidRowIsRefused() throws {
        let file = dir.path("s.csv")
        let long = String(repeating: "a", count: 3 * (1 << 20))
        try Data("time,kind,payload,rssi\n1795197600,gaen,\(long),-60\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: SightingsCSVError.self) { try SightingsFile.scan(file) }
    }

    @Test func aMissingFileSaysSo() throws {
        #expect(throws: SightingsFileError.self) { try SightingsFile.scan(dir.path("absent.csv")) }
        do {
            _ = try SightingsFile.scan(dir.path("absent.csv"))
        } catch let error as SightingsFileError {
            #expect(error.isMissing)
        }
    }
}
