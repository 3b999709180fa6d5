// capture-bench: advertising reports per second on one core (one thread), release build.
//
// Stages, each timed over the whole capture `--passes` times (thread CPU time and wall time):
//   capture   btsnoop records → H4 packets → HCI event decode → report iteration (the file path)
//   decode    HCI event decode + report iteration from event packets in memory (issue 3)
//   parse     BLEHost's general AD parser (AdvertisingData) walking every structure (for reference)
//   classify  parse + classify of each report's AD bytes (AdvertClassifier): the stage compared
//             with bluetooth-data-tools' parse_advertisement_data_bytes
//   pipeline  HCI event decode → classify → Herald node → presence tracker, clock tick each
//             venue second (issue 6 benchmark 1); one untimed warm-up pass first, so the node has
//             read the phones present (steady state)
//
// Usage: capture-bench CAPTURE [--stages capture,decode,parse,classify,pipeline] [--passes N] [--json]
import AdvertCorpus
import BLEHost
import Foundation
import Herald

guard CommandLine.arguments.count > 1, !CommandLine.arguments[1].hasPrefix("--") else {
    FileHandle.standardError.write(Data("usage: capture-bench CAPTURE [--stages capture,decode,parse,classify,pipeline] [--passes N] [--json]\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]
let stages = (option("--stages") ?? "capture,decode,parse,classify,pipeline").split(separator: ",").map(String.init)
let passes = option("--passes", default: 3)
let json = flag("--json")

let file: [UInt8]
let events: CaptureEvents
do {
    guard let data = FileManager.default.contents(atPath: path) else { throw CaptureError(message: "cannot read \(path)") }
    file = [UInt8](data)
    events = try CaptureEvents(btsnoop: file)
} catch {
    FileHandle.standardError.write(Data("capture-bench: \(error)\n".utf8))
    exit(1)
}
let classifier = try AdvertClassifier()

/// Every report of the capture, decoded once (their data slices share `events.storage`).
func decodedReports() -> [LEAdvertisingReport] {
    var out: [LEAdvertisingReport] = []
    for range in events.ranges {
        guard case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: events.storage[range]) else { continue }
        out.append(contentsOf: batch)
    }
    return out
}

struct Timing {
    var cpu: Double
    var wall: Double
}

func timed(_ body: () -> Void) -> Timing {
    let cpu0 = threadCPUSeconds(), wall0 = wallSeconds()
    body()
    return Timing(cpu: threadCPUSeconds() - cpu0, wall: wallSeconds() - wall0)
}

func report(_ stage: String, reports: Int, _ timings: [Timing], check: Int) {
    let cpuRates = timings.map { Double(reports) / $0.cpu }
    let wallRates = timings.map { Double(reports) / $0.wall }
    if json {
        let list = cpuRates.map { String(Int($0)) }.joined(separator: ",")
        print("{\"stage\":\"\(stage)\",\"reports\":\(reports),\"cpu_rates\":[\(list)],\"median_cpu_rate\":\(Int(median(cpuRates))),\"median_wall_rate\":\(Int(median(wallRates))),\"ns_per_report\":\(String(format: "%.1f", 1e9 / median(cpuRates))),\"check\":\(check)}")
    } else {
        print(String(format: "%-9@ %@ reports/s (thread CPU, median of %d), %@ reports/s wall, %.1f ns/report  [check %d]",
            stage, grouped(Int(median(cpuRates))), timings.count, grouped(Int(median(wallRates))), 1e9 / median(cpuRates), check))
    }
}

var reportCount = 0
for range in events.ranges {
    if case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: events.storage[range]) { reportCount += batch.count }
}
if !json {
    print("capture-bench: \(path): \(grouped(events.count)) events, \(grouped(reportCount)) reports, \(passes) passes per stage")
}

for stage in stages {
    var timings: [Timing] = []
    var check = 0
    switch stage {
    case "capture":
        for _ in 0..<passes {
            var n = 0
            timings.append(timed {
                var reader = ByteReader(file)
                do {
                    _ = try BTSnoopHeader.read(from: &reader)
                    while let record = try BTSnoopRecord.read(from: &reader) {
                        let packet = try H4Packet(datagram: record.data[...])
                        guard packet.type == .event, case .le(.advertisingReport(let batch)) = try HCIEvent(decoding: packet.body) else { continue }
                        for report in batch { n &+= Int(report.rawRSSI) &+ report.data.count }
                    }
                } catch {
                    FileHandle.standardError.write(Data("capture-bench: \(error)\n".utf8))
                }
            })
            check = n
        }
    case "decode":
        for _ in 0..<passes {
            var n = 0
            timings.append(timed {
                for range in events.ranges {
                    guard case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: events.storage[range]) else { continue }
                    for report in batch { n &+= Int(report.rawRSSI) &+ report.data.count }
                }
            })
            check = n
        }
    case "parse":
        let reports = decodedReports()
        for _ in 0..<passes {
            var n = 0
            timings.append(timed {
                for report in reports {
                    for structure in report.advertisingData { n &+= Int(structure.type.rawValue) &+ structure.data.count }
                }
            })
            check = n
        }
    case "classify":
        let reports = decodedReports()
        for _ in 0..<passes {
            var n = 0
            timings.append(timed {
                for report in reports {
                    switch classifier.classify(report.data) {
                    case .herald(let pseudo, let apple): n &+= 1 &+ (pseudo == nil ? 0 : 16) &+ (apple ? 32 : 0)
                    case .apple: n &+= 2
                    case .gaen(let gaen): n &+= 3 &+ Int(gaen.metadata & 0xF)
                    case .openTrace: n &+= 4
                    case .advertProtocol(let payload): n &+= 5 &+ payload.count
                    case .ignored(let reason): n &+= reason == .appleAccessory ? 6 : 7
                    }
                }
            })
            check = n
        }
    case "pipeline":
        var pipeline = Pipeline()
        let span = (events.times.last ?? 0) - (events.times.first ?? 0) + 1
        let t0 = events.times.first ?? 0
        func run(pass: Int) {
            let offset = Double(pass) * span - t0
            for (k, range) in events.ranges.enumerated() {
                pipeline.receive(events.storage[range], now: events.times[k] + offset, classifier: classifier)
            }
        }
        run(pass: 0)  // warm-up: the node meets the venue and reads its phones
        for pass in 1...passes {
            timings.append(timed { run(pass: pass) })
        }
        check = pipeline.measured
        if !json {
            let c = pipeline.node.counters
            print("pipeline  node: \(pipeline.node.targetCount) targets, \(c.connectionsStarted) connections, \(c.payloadsRead) payloads read, \(c.notHerald) not Herald; tracker: \(pipeline.tracker.trackedIdentities) identities, \(pipeline.tracker.openVisitCount) open visits, \(grouped(pipeline.measured)) measurements recorded")
        }
    default:
        FileHandle.standardError.write(Data("capture-bench: unknown stage \(stage)\n".utf8))
        exit(2)
    }
    report(stage, reports: reportCount, timings, check: check)
}
