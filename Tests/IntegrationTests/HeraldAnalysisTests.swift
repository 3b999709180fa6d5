import Foundation
import Testing

/// The Herald-format logs of a simulated hour, read as Herald's own analysis scripts read them
/// (herald-analysis `TestAnalysis.R`: `read.table(…, sep = ",")` with R's default quoting, which
/// treats both `"` and `'` as quotes), with a venue name holding an apostrophe and a comma.
@Suite struct HeraldAnalysisTests {
    static let venueName = "Erin's Stakehouse, Bar & Grill"

    struct Logs {
        let dir: TemporaryDirectory
        var path: String { dir.path("herald") }
        func file(_ name: String) -> String { dir.path("herald/" + name) }
        func lines(_ name: String) throws -> [Substring] {
            try String(contentsOfFile: file(name), encoding: .utf8).split(separator: "\n")
        }
    }

    static func simulatedHour() throws -> Logs {
        let dir = try TemporaryDirectory("herald-analysis")
        let config = try dir.write("venue-beacon.toml", """
            [venue]
            country = 826
            state = 4
            code = 123123
            name = "\(venueName)"
            [diary]
            path = "\(dir.path("unused.sqlite"))"
            """)
        let r = try ProcessRunner.venueBeacon([
            "simulate", "--visitors", "30", "--hours", "1", "--seed", "5", "--config", config, "--data-dir", dir.path("out"),
            "--herald-logs", dir.path("herald"),
        ])
        #expect(r.status == 0, "\(r.output)")
        return Logs(dir: dir)
    }

    /// One simulated hour (about 25 s in a debug build) for both checks.
    @Test func heraldsAnalysisReadsASimulatedHour() throws {
        let logs = try Self.simulatedHour()
        defer { logs.dir.remove() }
        try rReadsEveryFileWithTheRightRowCounts(logs)
        try measurementsMapToAPhoneThatWasRead(logs)
    }

    func rReadsEveryFileWithTheRightRowCounts(_ logs: Logs) throws {
        let script = """
            args <- commandArgs(trailingOnly = TRUE)
            d <- read.table(file.path(args[1], "detection.csv"), sep = ",", header = FALSE, stringsAsFactors = FALSE)
            c <- read.table(file.path(args[1], "contacts.csv"), sep = ",", header = TRUE, stringsAsFactors = FALSE)
            s <- read.table(file.path(args[1], "statistics.csv"), sep = ",", header = TRUE, stringsAsFactors = FALSE)
            cat(nrow(d), ncol(d), d[1, 1], "\\n", sep = "|")
            cat(nrow(c), ncol(c), sum(c$read == 2, na.rm = TRUE), sum(c$detectHerald == 6, na.rm = TRUE), "\\n", sep = "|")
            cat(nrow(s), ncol(s), "\\n", sep = "|")
            """
        let r = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/Rscript"), ["-e", script, logs.path])
        #expect(r.status == 0, "\(r.output)")
        let out = r.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        try #require(out.count == 3, "\(r.output)")

        let detection = try logs.lines("detection.csv")
        #expect(out[0][0] == "1")
        #expect(Int(out[0][1]) == HeraldLogFields.count(detection[0]), "the venue name's comma must not split it")
        #expect(out[0][2] == Self.venueName)

        let contacts = try logs.lines("contacts.csv")
        #expect(Int(out[1][0]) == contacts.count - 1, "R read \(out[1][0]) of \(contacts.count - 1) contact rows")
        #expect(out[1][1] == "11")
        let reads = contacts.filter { HeraldLogFields.split($0)[4] == "2" }.count
        #expect(Int(out[1][2]) == reads && reads > 20)
        #expect(Int(out[1][3]) ?? 0 > 0, "detectHerald rows")

        let statistics = try logs.lines("statistics.csv")
        #expect(Int(out[2][0]) == statistics.count - 1 && statistics.count > 10)
        #expect(out[2][1] == "6")
    }

    /// Herald's analysis joins measurements to the payload read from the same id: nearly every
    /// RSSI row must belong to an id with a read row, across address rotations.
    func measurementsMapToAPhoneThatWasRead(_ logs: Logs) throws {
        let rows = try logs.lines("contacts.csv").dropFirst().map(HeraldLogFields.split)
        let readIDs = Set(rows.filter { $0[4] == "2" }.map { $0[2] })
        let measures = rows.filter { $0[5] == "3" }
        let mapped = measures.filter { readIDs.contains($0[2]) }.count
        #expect(measures.count > 1000)
        #expect(Double(mapped) >= 0.99 * Double(measures.count), "\(mapped) of \(measures.count) RSSI rows map to a read phone")
        // Herald for Android's markers and calibration.
        let readRows = rows.enumerated().filter { $0.element[4] == "2" }
        #expect(readRows.contains { i, row in i > 0 && rows[i - 1][8] == "6" && rows[i - 1][2] == row[2] }, "detectHerald before a read")
        #expect(rows.contains { $0[9] == "7" }, "delete rows")
        #expect(measures.contains { $0[10].hasPrefix("RSSI:") && $0[10].hasSuffix("]") && $0[10].contains("[BLETransmitPower:12.0]") })
        #expect(measures.allSatisfy { $0[10].hasPrefix("RSSI:-") })
    }
}

/// Splits the node's Herald CSV rows (quoted fields allowed) for the checks above.
enum HeraldLogFields {
    static func split(_ line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        for c in line {
            if c == "\"" {
                quoted.toggle()
            } else if c == ",", !quoted {
                fields.append(field)
                field = ""
            } else {
                field.append(c)
            }
        }
        fields.append(field)
        return fields
    }

    static func count(_ line: Substring) -> Int { split(line).count }
}
