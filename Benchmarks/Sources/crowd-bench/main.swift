// crowd-bench: the venue node on the simulated air with a crowd in range at once (issue 6,
// benchmarks 2 and 5): memory while thousands of targets are tracked, the connection quota held,
// no visit lost, at max speed.
//
//   swift build -c release --package-path Benchmarks
//   Benchmarks/.build/release/crowd-bench [--phones 2000] [--minutes 60] [--seed 11] [--show-splits]
//
// --show-splits prints, for each phone whose visit the diary split, its recorded visits, the
// node's reads of its payload (with the earliest measurement attributed to each read) and the
// start of each of its address epochs, in venue seconds.
//
// Phones of the standard Herald mix (Android, iPhones in the foreground and background; no
// write-only phones) arrive over the first minute, stay the whole run at 1–10 m, and leave over
// the last minute. Resident memory is sampled every venue minute.
import Foundation
import Simulation
import VenueDiary
import VenueNode

var phones = 2000
var minutes = 60.0
/// Another seed is another crowd and air: splits of a few visits vary from seed to seed.
var seed: UInt64 = 11
var showSplits = false
var i = 1
let arguments = CommandLine.arguments
while i < arguments.count {
    switch arguments[i] {
    case "--phones": i += 1; phones = Int(arguments[i]) ?? phones
    case "--minutes": i += 1; minutes = Double(arguments[i]) ?? minutes
    case "--seed": i += 1; seed = UInt64(arguments[i]) ?? seed
    case "--show-splits": showSplits = true
    default: FileHandle.standardError.write(Data("unknown argument \(arguments[i])\n".utf8))
    }
    i += 1
}

/// Resident set size now, from /proc/self/statm (pages × page size).
func residentMegabytes() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
    else { return -1 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

let duration = minutes * 60
let mix = PhoneMix(heraldAndroid: 0.5, heraldAndroidWriter: 0, heraldIPhoneForeground: 0.15, heraldIPhoneBackground: 0.35, gaenPhone: 0)
let venue = VenueConfiguration(visitors: phones, openingHours: minutes / 60 + 0.1, seed: seed, mix: mix, walkPasts: 0, fixedDevices: 0)
var random = SimulationRandom(seed: seed, stream: 99)
let devices = VenueModel.generate(venue).devices.filter { $0.kind.payloadKind != nil }.map { d in
    let start = random.uniform(0, 60)
    let end = duration - random.uniform(0, 60)
    return SimulatedDevice(
        id: 0, kind: d.kind, owner: d.owner, payload: d.payload, advert: d.advert, advertInterval: d.advertInterval,
        signalWriteInterval: nil, rotation: d.rotation, measuredPower: d.measuredPower,
        presence: [PresenceSegment(start: start, end: end, path: .fixed(random.uniform(1, 10)))], seed: d.seed)
}
let numbered = devices.enumerated().map { k, d in
    SimulatedDevice(
        id: k, kind: d.kind, owner: k, payload: d.payload, advert: d.advert, advertInterval: d.advertInterval,
        signalWriteInterval: nil, rotation: d.rotation, measuredPower: d.measuredPower, presence: d.presence, seed: d.seed)
}
let truth = GroundTruth(configuration: venue, people: [], devices: numbered)

let path = NSTemporaryDirectory() + "crowd-bench-\(getpid()).sqlite"
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
let store = try DiaryStore(path: path)
let clock = ContinuousClock()
let started = clock.now
var run = try VenueRun(truth: truth, store: store)
var samples: [Double] = []
var mostLinks = 0
var mostTargets = 0
let end = duration + venue.checkOutSeconds + 5
while run.now < end {
    run.run(until: min(end, run.now + 1))
    mostLinks = max(mostLinks, run.core.engine.linkCount)
    if Int(run.now) % 60 == 0 {
        samples.append(residentMegabytes())
        mostTargets = max(mostTargets, run.driver.node.targetCount)
    }
}
run.finish()
let c = started.duration(to: clock.now).components
let wall = Double(c.seconds) + Double(c.attoseconds) * 1e-18
let report = EfficacyReport(truth: truth, diary: try store.visits(), reads: run.reads)
print("crowd-bench: \(numbered.count) phones in range for \(String(format: "%g", minutes)) min")
print(String(format: "wall %.1f s (%.0f× real time); reports %d", wall, end / wall, run.air.counters.advertsReported))
print(String(format: "resident memory: first minute %.1f MB, middle %.1f MB, last %.1f MB, max %.1f MB",
             samples.first ?? -1, samples[samples.count / 2], samples.last ?? -1, samples.max() ?? -1))
print("targets tracked at most \(mostTargets); links at most \(mostLinks) (quota \(NodeSetup().maxConnections))")
print(String(format: "recall %.4f (%d of %d), split %d, phantom %d, phones read %d of %d", report.recall, report.recalledVisits,
             report.eligibleVisits, report.splitVisits, report.phantomVisits, report.payloadReads?.phonesRead ?? 0, report.payloadReads?.phones ?? 0))
let n = run.driver.node.counters
print("node: \(n.connectionsStarted) connections started, \(n.connectionFailures) failed, \(n.connectionTimeouts) timed out, "
      + "\(n.connectionsRefused) refused (no link free), \(n.payloadsRead) payloads read (\(String(format: "%.2f", Double(n.payloadsRead) / end)) per venue second)")
print("phones: \(run.air.counters.phoneSessions) connected to the venue, \(run.air.counters.venueReads) read its payload")
print("by kind: " + report.byDeviceKind.sorted { $0.key < $1.key }.map { kind, f in
    "\(kind) \(f.recalledVisits)/\(f.eligibleVisits) recalled, \(f.splitVisits) split" }.joined(separator: "; "))

if showSplits {
    let diaryVisits = try store.visits()
    let origin = venue.origin
    var byPayload: [[UInt8]: [Visit]] = [:]
    for visit in diaryVisits { byPayload[visit.payload, default: []].append(visit) }
    var readsByPayload: [[UInt8]: [PayloadRead]] = [:]
    for read in run.reads { readsByPayload[read.payload, default: []].append(read) }
    for device in numbered {
        guard let payload = device.payload, let visits = byPayload[payload], visits.count > 1 else { continue }
        let stay = device.presence[0]
        func t(_ x: Double) -> String { String(format: "%.0f", x) }
        print("split: phone \(device.id) \(device.kind) present \(t(stay.start))–\(t(stay.end)) s")
        print("  diary visits: " + visits.map { v in
            "\(t(v.checkIn - origin))–\(v.checkOut.map { t($0 - origin) } ?? "open")" }.joined(separator: ", "))
        print("  reads at: " + (readsByPayload[payload] ?? []).map { r in
            "\(t(r.time)) (earliest attributed \(r.earliestAttributed.map(t) ?? "none"))" }.joined(separator: ", "))
        var epochs: [String] = []
        var epoch = device.rotation.epoch(at: stay.start)
        while device.rotation.start(ofEpoch: epoch) < min(stay.end, 3600) && epochs.count < 12 {
            epochs.append(t(max(stay.start, device.rotation.start(ofEpoch: epoch))))
            epoch += 1
        }
        print("  address epochs start at: " + epochs.joined(separator: ", "))
    }
}
