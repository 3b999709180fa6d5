import AdvertCorpus
import BLEHost
import Foundation
import Herald

/// The stages, each timed over every report of the adverts `--runs` times.
enum Stage: String, CaseIterable {
    /// btsnoop records → H4 packets → HCI event decode → report iteration, from the file's bytes
    /// in memory (captures only).
    case capture
    /// HCI event decode + report iteration from the event packets in memory (issue 3).
    case decode
    /// HCI event decode + report iteration + classification into an `AdvertSighting`.
    case sighting
    /// BLEHost's general AD parser (`AdvertisingData`) walking every structure (for reference).
    case parse
    /// AD parse + Herald classification of each report's data (`AdvertClassifier`; flags only,
    /// nothing allocated): the stage compared with the peer's cached parser.
    case classify
    /// The full parse the peer does (``ParsedAdvert``): compared with its uncached parser.
    case fullParse = "full-parse"
    /// Decode → classify → Herald node → presence tracker, clock tick each venue second, one
    /// untimed warm-up pass first (``TrackerPipeline``).
    case pipeline
    /// Decode → Herald node → `DiaryPipeline` → presence tracker and SQLite diary, each run from a
    /// fresh node and diary (``DiaryPipelineRun``).
    case diaryPipeline = "diary-pipeline"
}

func measure(_ stage: Stage, _ adverts: Adverts, runs: Int, classifier: AdvertClassifier) throws -> StageResult {
    let events = adverts.events, data = adverts.data
    switch stage {
    case .capture:
        let file = adverts.file
        return timedRuns(runs) { n in
            var reader = ByteReader(file)
            do {
                _ = try BTSnoopHeader.read(from: &reader)
                while let record = try BTSnoopRecord.read(from: &reader) {
                    let packet = try H4Packet(datagram: record.data[...])
                    guard packet.type == .event, case .le(.advertisingReport(let batch)) = try HCIEvent(decoding: packet.body) else { continue }
                    for report in batch { n &+= Int(report.rawRSSI) &+ report.data.count }
                }
            } catch {
                FileHandle.standardError.write(Data("advert-bench: \(error)\n".utf8))
            }
        }
    case .decode:
        return timedRuns(runs) { n in
            for range in events.ranges {
                guard case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: events.storage[range]) else { continue }
                for report in batch { n &+= Int(report.rawRSSI) &+ report.data.count }
            }
        }
    case .sighting:
        return timedRuns(runs) { n in
            for range in events.ranges {
                guard case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: events.storage[range]) else { continue }
                for report in batch where AdvertSighting(report: report, classifier: classifier).connectable == true { n += 1 }
            }
        }
    case .parse:
        return timedRuns(runs) { n in
            for i in 0..<data.count {
                for structure in AdvertisingData(data[i]) { n &+= Int(structure.type.rawValue) &+ structure.data.count }
            }
        }
    case .classify:
        return timedRuns(runs) { n in
            for i in 0..<data.count {
                switch classifier.classify(data[i]) {
                case .herald(let pseudo, let apple): n &+= 1 &+ (pseudo == nil ? 0 : 16) &+ (apple ? 32 : 0)
                case .apple: n &+= 2
                case .gaen(let gaen): n &+= 3 &+ Int(gaen.metadata & 0xF)
                case .openTrace: n &+= 4
                case .advertProtocol(let payload): n &+= 5 &+ payload.count
                case .ignored(let reason): n &+= reason == .appleAccessory ? 6 : 7
                }
            }
        }
    case .fullParse:
        return timedRuns(runs) { n in
            var names = UUIDNames()
            for i in 0..<data.count {
                let parsed = ParsedAdvert(data[i], names: &names)
                n &+= parsed.serviceUUIDs.count &+ parsed.serviceData.count &+ parsed.manufacturerData.count
            }
        }
    case .pipeline:
        return trackerPipeline(adverts, runs: runs, classifier: classifier)
    case .diaryPipeline:
        return try diaryPipeline(adverts, runs: runs, classifier: classifier)
    }
}

func trackerPipeline(_ adverts: Adverts, runs: Int, classifier: AdvertClassifier) -> StageResult {
    let events = adverts.events, phones = adverts.phones
    var pipeline = TrackerPipeline()
    func run(pass: Int) {
        let offset = Double(pass) * adverts.duration
        for (k, range) in events.ranges.enumerated() {
            pipeline.receive(events.storage[range], now: events.times[k] + offset, classifier: classifier, phones: phones)
        }
    }
    run(pass: 0)  // warm-up: the node meets the venue and reads its phones
    var result = StageResult()
    for pass in 1...runs {
        result.timings.append(timed { run(pass: pass) })
    }
    result.check = pipeline.measured
    let c = pipeline.node.counters
    result.note = "node: \(pipeline.node.targetCount) targets, \(c.connectionsStarted) connections, \(c.payloadsRead) payloads read, "
        + "\(c.notHerald) not Herald; tracker: \(pipeline.tracker.trackedIdentities) identities, \(pipeline.tracker.openVisitCount) open visits, "
        + "\(grouped(pipeline.measured)) measurements recorded"
    return result
}

func diaryPipeline(_ adverts: Adverts, runs: Int, classifier: AdvertClassifier) throws -> StageResult {
    var result = StageResult()
    for _ in 0..<runs {
        let path = NSTemporaryDirectory() + "advert-bench-\(getpid())-\(adverts.path == nil ? adverts.name : "capture").sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var run = try DiaryPipelineRun(adverts, classifier: classifier, diaryPath: path)
        result.timings.append(timed { run.run() })
        let visits = (try? run.pipeline.diary.store.stats().visits) ?? -1
        result.check = visits
        result.note = "\(visits) visits in the diary, \(run.errors) write errors; at the end \(run.node.targetCount) targets followed, "
            + "\(run.pipeline.diary.tracker.trackedIdentities) identities in the presence tracker, \(run.pipeline.cachedKeys) keys cached"
    }
    return result
}
