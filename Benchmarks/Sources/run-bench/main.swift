// run-bench: the real `venue-beacon run` process (issue 6, benchmarks 2 and 4): wall time from
// spawn to systemd's READY=1, and resident memory with a crowd in range.
//
//   swift build -c release --product venue-beacon
//   swift build -c release --package-path Benchmarks --product run-bench
//   Benchmarks/.build/release/run-bench [--binary .build/release/venue-beacon] [--starts 5]
//       [--visits 1000000] [--targets 0,1000,10000] [--minutes 3] [--work /tmp/run-bench]
//       [--unit systemd/venue-beacon.service]   (its Environment= lines are the child's, as under
//                                               systemd; --unit "" for none)
//       [--replicate-to mqtt://127.0.0.1:PORT]  (the node replicates to a venue hub there, as
//                                               node "hall" without a password)
//       [--flood 0,6000]   (each memory run once per rate: besides the crowd, that many
//                          advertising reports a second from the first READY, each a new random
//                          address and Exposure Notification identifier; issue 24 item 4)
//       [--flood-devices N] (the flood's reports from N devices in turn, each keeping its
//                          address and identifier: a crowd of advert-only phones; 0: all new)
//
// The child runs with a temporary config (the default venue, its diary in a fresh directory)
// against the simulated air served on a unix socket (AirServer), and `$NOTIFY_SOCKET` pointing
// at a datagram socket here. Starts: an idle air, first with a new diary, then with an existing
// diary of `--visits` visits. Memory: `--targets` phones in range from the first scan (GAEN-only
// 60 %, Herald Android 30 %, Herald iPhone in the foreground 10 %, plus the venue model's
// accessories and wearables as noise), /proc/PID/status sampled every 5 s for `--minutes`.
import Foundation
import Glibc
import Simulation
import VenueDiary

func option(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

let binary = option("--binary") ?? ".build/release/venue-beacon"
let starts = option("--starts").flatMap { Int($0) } ?? 5
let diaryVisits = option("--visits").flatMap { Int($0) } ?? 1_000_000
let crowds = (option("--targets") ?? "0,1000,10000").split(separator: ",").compactMap { Int($0) }
let floods = (option("--flood") ?? "0").split(separator: ",").compactMap { Int($0) }
let floodDevices = option("--flood-devices").flatMap { Int($0) } ?? 0
let minutes = option("--minutes").flatMap { Double($0) } ?? 3
let work = option("--work") ?? "/tmp/run-bench"
let unit = option("--unit") ?? "systemd/venue-beacon.service"
// A venue hub's broker (with a hub running against it): the node replicates there (issue 23).
let replicateTo = option("--replicate-to")
let environmentOfUnit = unit.isEmpty ? [:] : unitEnvironment(unit)
let sampleEvery = 5.0

signal(SIGPIPE, SIG_IGN)
try? FileManager.default.removeItem(atPath: work)
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
guard FileManager.default.isExecutableFile(atPath: binary) else {
    throw BenchError("\(binary) not found: build it with `swift build -c release --product venue-beacon`")
}
let air = try AirServer(path: work + "/controller.sock")
let notify = try NotifyListener(path: work + "/notify.sock")
air.start()

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
func megabytes(_ kB: Int) -> String { String(format: "%.1f", Double(kB) / 1024) }
func grouped(_ n: Int) -> String {
    let f = NumberFormatter()
    f.numberStyle = .decimal
    f.groupingSeparator = ","
    return f.string(from: NSNumber(value: n)) ?? "\(n)"
}
func freshDirectory() throws -> String {
    let dir = work + "/run-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// Phones in range from time 0 until `until` (virtual seconds, past the end of the run; the truth
/// lists a GAEN phone's visits per rotation, so not forever), at 1–10 m, each with the venue
/// model's advert, interval and address rotation; `phones` = 0 is an empty air.
func crowd(_ phones: Int, until: Double) -> GroundTruth {
    let mix = PhoneMix(heraldAndroid: 0.3, heraldAndroidWriter: 0, heraldIPhoneForeground: 0.1, heraldIPhoneBackground: 0, gaenPhone: 0.6)
    let venue = VenueConfiguration(visitors: phones, openingHours: 10, seed: 21, mix: mix, walkPasts: 0, fixedDevices: 0, applePhoneShare: 0)
    var random = SimulationRandom(seed: 21, stream: 98)
    let devices = VenueModel.generate(venue).devices.map { d in
        SimulatedDevice(
            id: d.id, kind: d.kind, owner: d.owner, payload: d.payload, advert: d.advert, advertInterval: d.advertInterval,
            signalWriteInterval: d.signalWriteInterval, rotation: d.rotation, measuredPower: d.measuredPower,
            presence: [PresenceSegment(start: 0, end: until, path: .fixed(random.uniform(1, 10)))], seed: d.seed)
    }
    return GroundTruth(configuration: venue, people: [], devices: devices)
}

/// Fills a diary with `count` closed 30-minute Herald visits (the shape diary-bench exports).
func fillDiary(_ path: String, visits count: Int) throws {
    let store = try DiaryStore(path: path)
    let t0 = 1_700_000_000.0
    var batch: [Visit] = []
    for i in 0..<count {
        var payload = [UInt8](repeating: 0, count: 129)
        withUnsafeBytes(of: UInt32(i).littleEndian) { payload.replaceSubrange(3..<7, with: $0) }
        let checkIn = t0 + Double(i) * 7.3
        batch.append(Visit(
            kind: .herald, payload: payload, checkIn: checkIn, lastSeen: checkIn + 1800 + Double(i % 600),
            checkOut: checkIn + 1800 + Double(i % 600), samples: 120 + i % 50, rssiMax: -45 - i % 20, rssiSum: (120 + i % 50) * (-62 - i % 7)))
        if batch.count == 50_000 || i == count - 1 {
            try store.save(batch)
            batch.removeAll(keepingCapacity: true)
        }
    }
}

/// Spawns the node in `directory` and returns it with its spawn-to-READY time (nil: no READY
/// within a minute).
func startNode(in directory: String) throws -> (NodeProcess, Double?) {
    notify.clear()
    let node = try NodeProcess.start(
        binary: binary, directory: directory, device: air.path, notifySocket: notify.path, unitEnvironment: environmentOfUnit,
        replicateTo: replicateTo)
    let ready = notify.wait(for: "READY=1", timeout: .seconds(60))
    return (node, ready.map { seconds($0 - node.spawned) })
}

func summary(_ times: [Double]) -> String {
    let sorted = times.sorted()
    guard let low = sorted.first, let high = sorted.last else { return "no READY" }
    return String(format: "median %.0f ms, range %.0f–%.0f ms (%d starts)", sorted[sorted.count / 2] * 1000, low * 1000, high * 1000, sorted.count)
}

func measureStarts(_ label: String, directory: () throws -> String) throws {
    var times: [Double] = []
    for _ in 0..<starts {
        let dir = try directory()
        let (node, ready) = try startNode(in: dir)
        if let ready { times.append(ready) } else { print("   no READY=1 within 60 s; log: \(node.log)") }
        node.stop()
    }
    print("   \(label): spawn to READY=1 " + summary(times) + "; each " + times.map { String(format: "%.0f", $0 * 1000) }.joined(separator: ", ") + " ms")
}

print("== run-bench: \(binary); machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, load \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"), \(Date())")
print("   environment from \(unit.isEmpty ? "no unit" : unit): \(environmentOfUnit.isEmpty ? "none" : environmentOfUnit.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
air.serve(crowd(0, until: 0))
if starts > 0 {
    print("== start to READY (idle air)")
    try measureStarts("new diary") { try freshDirectory() }
    if diaryVisits > 0 {
        let dir = try freshDirectory()
        let clock = ContinuousClock()
        let began = clock.now
        try fillDiary(dir + "/diary.sqlite", visits: diaryVisits)
        let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/diary.sqlite")[.size] as? Int) ?? 0
        print(String(format: "   (filled a diary with %@ visits, %@ bytes, in %.1f s: setup)", grouped(diaryVisits), grouped(size), seconds(clock.now - began)))
        try measureStarts("diary of \(grouped(diaryVisits)) visits") { dir }
    }
}

for phones in crowds {
  for rate in floods {
    let truth = crowd(phones, until: minutes * 60 + 600)
    air.serve(truth)
    let kinds = Dictionary(grouping: truth.devices, by: \.kind).map { "\($0.value.count) \($0.key.rawValue)" }.sorted().joined(separator: ", ")
    let spam =
        rate == 0 ? "" : floodDevices > 0
        ? ", \(grouped(rate)) EN adverts/s from \(grouped(floodDevices)) devices in turn" : ", a flood of \(grouped(rate)) random EN adverts/s"
    print("== memory: \(grouped(phones)) phones in range (\(truth.devices.count) devices: \(kinds.isEmpty ? "none" : kinds))\(spam), \(String(format: "%g", minutes)) min")
    let directory = try freshDirectory()
    let (node, ready) = try startNode(in: directory)
    guard ready != nil else {
        print("   no READY=1 within 60 s; log: \(node.log)")
        node.stop()
        continue
    }
    air.flood(perSecond: rate, devices: floodDevices)
    let clock = ContinuousClock()
    let began = clock.now
    var samples: [(at: Double, memory: Memory, status: String)] = []
    while seconds(clock.now - began) < minutes * 60 {
        Thread.sleep(forTimeInterval: sampleEvery)
        guard let memory = node.memory() else { break }
        samples.append((seconds(clock.now - began), memory, notify.status ?? ""))
    }
    guard let first = samples.first, let last = samples.last else {
        print("   the node exited; log: \(node.log)")
        continue
    }
    let middle = samples[samples.count / 2]
    func line(_ name: String, _ s: (at: Double, memory: Memory, status: String)) {
        print(String(format: "   %-6@ %5.0f s: VmRSS %@ MB (anon %@, file %@), VmHWM %@ MB, %d threads; STATUS %@", name, s.at,
                     megabytes(s.memory.rss), megabytes(s.memory.anon), megabytes(s.memory.file), megabytes(s.memory.hwm),
                     s.memory.threads, s.status))
    }
    line("first", first)
    line("middle", middle)
    line("last", last)
    let perMinute = samples.filter { Int($0.at.rounded()) % 60 == 0 }
    print("   VmRSS / RssAnon each minute (MB): " + perMinute.map { "\(megabytes($0.memory.rss)) / \(megabytes($0.memory.anon))" }.joined(separator: ", "))
    let followed = perMinute.compactMap { s in s.status.split(separator: ";").first { $0.hasSuffix("devices followed") }?.split(separator: " ").first }
    print("   devices followed each minute: " + followed.joined(separator: ", "))
    let peak = samples.map(\.memory.rss).max() ?? 0
    print("   peak VmRSS sampled \(megabytes(peak)) MB; VmHWM at the end \(megabytes(last.memory.hwm)) MB")
    print("   smaps_rollup at the end (MB): " + node.rollup().map { "\($0.0) \(megabytes($0.1))" }.joined(separator: ", "))
    print("   resident by mapping at the end (MB): " + node.residentByMapping().prefix(12).map { "\($0.0) \(megabytes($0.1))" }.joined(separator: ", "))
    if let c = air.counters {
        print("   air: \(grouped(c.advertsHeard)) adverts heard, \(grouped(c.advertsReported)) reported in \(grouped(c.reportEvents)) events, "
              + "\(c.connectionsEstablished) connections, \(c.phoneSessions) phone sessions, \(c.venueReads) venue reads")
    }
    let flooded = air.flood(perSecond: 0)
    if rate > 0 { print("   flood: \(grouped(flooded)) reports sent") }
    node.stop()
    let log = (try? String(contentsOfFile: node.log, encoding: .utf8)) ?? ""
    let behind = log.split(separator: "\n").filter { $0.contains("fell behind") }
    if !behind.isEmpty { print("   node log: \(behind.count) 'fell behind' warnings, last: \(behind.last ?? "")") }
    let admission = log.split(separator: "\n").filter { $0.contains("flood") || $0.contains("evict") }
    if let last = admission.last { print("   node log: \(admission.count) admission lines, last: \(last)") }
    // What the diary kept: visits by kind, and the crowd's phones among them.
    let visits = try DiaryStore(path: directory + "/diary.sqlite", readOnly: true).visits()
    let byKind = Dictionary(grouping: visits, by: \.kind).map { "\($0.value.count) \($0.key)" }.sorted().joined(separator: ", ")
    let repeated = visits.filter { $0.samples > 1 }.count
    print("   diary: \(grouped(visits.count)) visits (\(byKind.isEmpty ? "none" : byKind)), \(grouped(repeated)) of them seen more than once")
  }
}
