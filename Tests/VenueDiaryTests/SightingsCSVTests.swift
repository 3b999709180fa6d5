import Testing
@testable import VenueDiary

@Suite struct SightingsCSVTests {
    func parse(_ text: String) throws(SightingsCSVError) -> [Sighting] {
        try SightingsCSV.parse(Array(text.utf8))
    }

    func error(_ text: String) -> SightingsCSVError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyTimeFormKindAndLineEnding() throws {
        let text = "\u{FEFF}time,kind,payload,rssi\r\n"
            + "1795197600,herald,00AB10ff,-67\r\n"
            + "\r\n"
            + "1795197600.25,gaen,01020000000000000000000000000000,-80\n"
            + "2026-11-20T18:00:00Z,opentrace,ff,0\n"
            + "2026-11-20T19:30:00.5+01:30, advert ,\"abcd\",+5\n"
            + "2026-11-20 17:00:00-01:00,HERALD,00,-127\n"
            + "2026-11-20t18:00:00.000z,herald,00,127"
        let sightings = try parse(text)
        #expect(sightings == [
            Sighting(time: 1_795_197_600, kind: .herald, payload: [0x00, 0xAB, 0x10, 0xFF], rssi: -67),
            Sighting(time: 1_795_197_600.25, kind: .gaen, payload: [1, 2] + Array(repeating: 0, count: 14), rssi: -80),
            Sighting(time: 1_795_197_600, kind: .opentrace, payload: [0xFF], rssi: 0),
            Sighting(time: 1_795_197_600.5, kind: .advert, payload: [0xAB, 0xCD], rssi: 5),
            Sighting(time: 1_795_197_600, kind: .herald, payload: [0], rssi: -127),
            Sighting(time: 1_795_197_600, kind: .herald, payload: [0], rssi: 127),
        ])
        #expect(try parse("time,kind,payload,rssi\n").isEmpty)
    }

    /// An empty rssi is a sighting without a measurement, as the live node records one.
    @Test func anEmptyRSSIIsASightingWithoutAMeasurement() throws {
        let sightings = try parse("time,kind,payload,rssi\n1795197600,herald,00,\n1795197601,gaen,01010101010101010101010101010101, \"\" \n1795197602,herald,00,-60\n")
        #expect(sightings == [
            Sighting(time: 1_795_197_600, kind: .herald, payload: [0], rssi: nil),
            Sighting(time: 1_795_197_601, kind: .gaen, payload: Array(repeating: 1, count: 16), rssi: nil),
            Sighting(time: 1_795_197_602, kind: .herald, payload: [0], rssi: -60),
        ])
    }

    @Test func aBadRowNamesItsLineAndTheProblem() {
        let header = "time,kind,payload,rssi\n"
        let good = "1795197600,herald,00,-60\n"
        let cases: [(String, Int, String)] = [
            (header + good + "yesterday,herald,00,-60\n", 3, "time 'yesterday'"),
            (header + good + "\n" + "2026-02-30T10:00:00Z,herald,00,-60\n", 4, "time '2026-02-30T10:00:00Z'"),
            (header + "2026-11-20T18:00:00,herald,00,-60\n", 2, "time '2026-11-20T18:00:00'"),
            (header + "1e9,herald,00,-60\n", 2, "time '1e9'"),
            (header + "-5,herald,00,-60\n", 2, "time '-5'"),
            (header + good + good + "1795197600,bluetooth,00,-60\n", 4, "kind 'bluetooth' is not one of herald, gaen, opentrace, advert"),
            (header + "1795197600,herald,abc,-60\n", 2, "odd number of hex digits"),
            (header + "1795197600,herald,zz,-60\n", 2, "not a hex digit: 'z'"),
            (header + "1795197600,gaen,0102030405,-60\n", 2, "a gaen payload is 16 bytes (the rolling proximity identifier) or 20 (with its 4 bytes of metadata), not 5"),
            (header + "1795197600,gaen,\(String(repeating: "ab", count: 17)),-60\n", 2, "a gaen payload is 16 bytes"),
            (header + "1795197600,herald,,-60\n", 2, "payload is empty"),
            (header + "1795197600,herald,\(String(repeating: "00", count: 1025)),-60\n", 2, "payload is 1025 bytes"),
            (header + "1795197600,herald,00,-60.5\n", 2, "rssi '-60.5'"),
            (header + "1795197600,herald,00,-128\n", 2, "rssi '-128'"),
            (header + "1795197600,herald,00\n", 2, "expected 4 fields (time,kind,payload,rssi), found 3"),
            (header + "1795197600,herald,00,-60,extra\n", 2, "found 5"),
            ("when,what,who,how\n" + good, 1, "expected the header time,kind,payload,rssi, found 'when,what,who,how'"),
            (good, 1, "expected the header"),
            ("", 1, "no header"),
            ("\n\n", 1, "no header"),
        ]
        for (text, line, problem) in cases {
            let found = error(text)
            #expect(found?.line == line, "\(text.prefix(80))")
            #expect(found?.problem.contains(problem) == true, "\(found?.problem ?? "no error") should mention \(problem)")
            #expect(found?.description.hasPrefix("line \(line): ") == true)
        }
    }

    @Test func aSightingFromTheFutureIsRefusedNamingItsLine() {
        let now = 1_795_197_600.0
        let text = "time,kind,payload,rssi\n1795197600,herald,00,-60\n1795198200,herald,00,-60\n4070908800,herald,00,-60\n"
        do {
            _ = try SightingsCSV.parse(Array(text.utf8), now: now)
            Issue.record("a sighting in 2099 was accepted")
        } catch {
            #expect(error.line == 4)
            #expect(error.problem == "time '4070908800' (2099-01-01T00:00:00Z) is later than now (2026-11-20T18:00:00Z) by more than the 10 minutes tolerated for a clock running ahead: a sighting cannot come from the future")
        }
        // Ten minutes ahead (a clock running fast) is within the tolerance; a second more is not.
        #expect(throws: Never.self) { try SightingsCSV.parse(Array("time,kind,payload,rssi\n1795198200,herald,00,-60\n".utf8), now: now) }
        #expect(throws: SightingsCSVError.self) { try SightingsCSV.parse(Array("time,kind,payload,rssi\n1795198201,herald,00,-60\n".utf8), now: now) }
    }
}
