// diary-bench: throughput of the venue diary, in release, on one core.
//
//   1. sightings/s through the presence tracker and the batched diary writer (the live path:
//      VenueDiary with FlushPolicy.live, a clock tick per simulated second, real SQLite file),
//      with 1,000 and 10,000 concurrent targets and 129-byte payloads, each present target
//      sighted once per simulated second; then the same with check-ins batched every 30 s;
//   2. the time to export 1,000,000 visits to CSV (streamed from the diary file);
//   3. `diary replay`: sightings/s of a sightings file (1,000 phones, 16-byte payloads, one row a
//      phone a second) checked and replayed into a new diary, as the command does.
//
// Usage: diary-bench [--visits N] [--sightings N] [--targets 1000|10000] [--diary PATH] [--replay N]
//   defaults: 6,000,000 sightings at each target count, 1,000,000 visits, 1,000,000 replayed
//   rows; 0 skips a stage; --diary keeps the filled export diary at PATH and reuses it next time
import Foundation
import VenueDiary
import VenueNode

struct BenchError: Error {
    var message: String
}

func argument(_ name: String, default value: Int) -> Int {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count, let n = Int(args[i + 1]) else { return value }
    return n
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// CPU seconds (user + system) this process has used: on a shared machine, wall time also
/// counts other processes' turns, CPU time does not (it still counts our own fsync system calls
/// but not the time spent waiting for the disk).
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func payload(_ id: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 129)
    withUnsafeBytes(of: UInt32(id).littleEndian) { bytes.replaceSubrange(3..<7, with: $0) }
    for i in 7..<129 { bytes[i] = UInt8(truncatingIfNeeded: id &* 31 &+ i &* 7) }
    return bytes
}

func scratchDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("diary-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func grouped(_ n: Int) -> String {
    let digits = Array(String(n))
    var out = ""
    for (i, d) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(d)
    }
    return out
}

/// Every target is present 600 s, then away 400 s (longer than check-out, so each cycle is a
/// new visit), phases spread evenly; present targets are sighted once per simulated second.
func trackerAndWriter(targets: Int, sightings wanted: Int, policy: FlushPolicy) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let store = try DiaryStore(path: dir.appendingPathComponent("diary.sqlite").path)
    let t0 = 1_795_197_600.0
    var diary = try VenueDiary(store: store, settings: DiarySettings(), now: t0, policy: policy)
    let keys = (0..<targets).map { diary.key(for: .herald, payload: payload($0)) }
    let phase = (0..<targets).map { ($0 * 997) % 1000 }
    let rounds = wanted / (targets * 6 / 10)

    var sightings = 0
    var checkIns = 0
    let clock = ContinuousClock()
    let start = clock.now
    let cpuStart = cpuSeconds()
    for round in 0..<rounds {
        let now = t0 + Double(round)
        for j in 0..<targets where (round + phase[j]) % 1000 < 600 {
            diary.record(keys[j], time: now, rssi: -50 - (round + j) % 30)
            sightings += 1
        }
        for change in try diary.tick(now: now) where change.event == .checkedIn { checkIns += 1 }
    }
    try diary.close(now: t0 + Double(rounds), checkingOutOpenVisits: true)
    let elapsed = seconds(clock.now - start)
    let cpu = cpuSeconds() - cpuStart
    let stats = try store.stats()
    print(
        "\(policy == .live ? "live policy    " : "batched 30 s   ") targets \(grouped(targets)): \(grouped(sightings)) sightings over \(rounds) s of venue time in "
            + String(format: "%.2f s wall = %@ sightings/s ", elapsed, grouped(Int(Double(sightings) / elapsed)))
            + String(format: "(%.2f s CPU = %@ sightings/s); ", cpu, grouped(Int(Double(sightings) / cpu)))
            + "\(grouped(checkIns)) check-ins, \(grouped(stats.visits)) visits written in \(diary.committedBatches) transactions, "
            + "diary \(stats.fileBytes / 1_048_576) MiB")
}

/// Fills a diary with `count` visits (or reuses the one at `reuse` when it already holds them),
/// then exports it all as CSV.
func export(visits count: Int, reuse: String?) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let store = try DiaryStore(path: reuse ?? dir.appendingPathComponent("diary.sqlite").path)
    let clock = ContinuousClock()
    let fillStart = clock.now
    let t0 = 1_700_000_000.0
    var batch: [Visit] = []
    let existing = try store.stats().visits
    for i in existing < count ? 0..<count : 0..<0 {
        let checkIn = t0 + Double(i) * 7.3
        batch.append(Visit(
            kind: .herald, payload: payload(i), checkIn: checkIn, lastSeen: checkIn + 1800 + Double(i % 600),
            checkOut: i % 1000 == 0 ? nil : checkIn + 1800 + Double(i % 600), samples: 120 + i % 50,
            rssiMax: -45 - i % 20, rssiSum: (120 + i % 50) * (-62 - i % 7)))
        if batch.count == 50_000 || i == count - 1 {
            try store.save(batch)
            batch.removeAll(keepingCapacity: true)
        }
    }
    let fill = seconds(clock.now - fillStart)
    let venue = VenueIdentity(country: 826, state: 4, code: 123_123, name: "Bench Arms")

    var bytes = 0
    let discardStart = clock.now
    let discardCPUStart = cpuSeconds()
    let exported = try DiaryExport.export(.csv, from: store, window: .all, venue: venue, generatedAt: t0) { bytes += $0.count }
    let discard = seconds(clock.now - discardStart)
    let discardCPU = cpuSeconds() - discardCPUStart

    let path = dir.appendingPathComponent("export.csv").path
    guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
        throw BenchError(message: "cannot create \(path)")
    }
    let fileStart = clock.now
    try DiaryExport.export(.csv, from: store, window: .all, venue: venue, generatedAt: t0, to: { try handle.write(contentsOf: $0) })
    try handle.synchronize()
    try handle.close()
    let toFile = seconds(clock.now - fileStart)

    if existing < count {
        print(String(format: "fill            %@ visits saved in %.2f s (%@ visits/s, setup only)", grouped(count), fill, grouped(Int(Double(count) / fill))))
    }
    print(String(
        format: "export CSV      %@ visits, %@ bytes: %.2f s wall (%.2f s CPU) to a discarding sink, %.2f s wall to a file (fsynced)",
        grouped(exported.visits), grouped(bytes), discard, discardCPU, toFile))
}

/// Writes a sightings file of `rows` rows (every phone present 600 s, away 400 s, one row a present
/// phone a second), then times `diary replay`'s two passes into a new diary.
func replay(rows wanted: Int) throws {
    let dir = try scratchDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("sightings.csv").path
    let phones = 1_000
    var text = "time,kind,payload,rssi\n"
    var rows = 0
    var second = 0
    while rows < wanted {
        for phone in 0..<phones where (second + phone * 997 % 1000) % 1000 < 600 && rows < wanted {
            text += "\(1_795_197_600 + second),\(phone % 4 == 0 ? "gaen" : "herald"),\(String(format: "%032x", phone * 7919)),-\(50 + (second + phone) % 30)\n"
            rows += 1
        }
        second += 1
    }
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    let store = try DiaryStore(path: dir.appendingPathComponent("diary.sqlite").path)
    let clock = ContinuousClock()
    let start = clock.now
    let cpuStart = cpuSeconds()
    let summary = try replayFile(file, into: store)
    let elapsed = seconds(clock.now - start)
    let cpu = cpuSeconds() - cpuStart
    print(
        "replay          \(grouped(summary.sightings)) sightings (\(text.utf8.count / 1_048_576) MiB, \(second) s of venue time) in "
            + String(format: "%.2f s wall = %@ sightings/s ", elapsed, grouped(Int(Double(summary.sightings) / elapsed)))
            + String(format: "(%.2f s CPU = %@ sightings/s); ", cpu, grouped(Int(Double(summary.sightings) / cpu)))
            + "\(grouped(summary.visits)) visits in \(summary.batches) transactions")
}

/// `diary replay FILE` as the command runs it (through the node's diary pipeline).
func replayFile(_ file: String, into store: DiaryStore) throws -> ReplaySummary {
    try SightingsReplay.replay(path: file, into: store, settings: DiarySettings(), now: Date().timeIntervalSince1970)
}

let sightings = argument("--sightings", default: 6_000_000)
let visits = argument("--visits", default: 1_000_000)
let only = argument("--targets", default: 0)
// The live policy commits a check-in at the next tick: in this compressed time that is up to one
// fsync per simulated second. The second run batches check-ins with the 30 s refresh instead,
// to show what the commits cost.
let batched = FlushPolicy(interval: 30, maxPendingChanges: 10_000, checkInsWithin: 30)
for targets in [1_000, 10_000] where sightings > 0 && (only == 0 || only == targets) {
    for policy in [FlushPolicy.live, batched] {
        try trackerAndWriter(targets: targets, sightings: sightings, policy: policy)
    }
}
let reuse = CommandLine.arguments.firstIndex(of: "--diary").flatMap { $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil }
if visits > 0 { try export(visits: visits, reuse: reuse) }
if argument("--replay", default: 1_000_000) > 0 { try replay(rows: argument("--replay", default: 1_000_000)) }
