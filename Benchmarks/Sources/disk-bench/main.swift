// disk-bench: bytes written to disk per venue hour (issue 6, benchmark 3).
//
// One venue, deterministic by seed: `--visits-per-hour` (300) guests arrive evenly at random over
// `--hours` (6) of opening, staying 5–15 min (20%), 15–60 min (50%) or 1–3 h (30%), plus a third
// as many walk-pasts (under a minute); every phone present is measured once per second (a
// controller delivers several adverts a second; the node's measurements reach the diary as they
// come). The same measurements go through
//   1. the real diary: VenueDiary (FlushPolicy.live: check-ins within 2 minutes, open visits'
//      progress every 10) on a SQLite file in WAL mode, synchronous = FULL, with
//      SQLite's automatic checkpoints; a clock tick per venue second; and
//   2. the naive design: Herald's contacts.csv pattern, one row per RSSI measurement, through
//      our HeraldLogWriter (flushed every 5 s, as its owner does).
// Measured per phase from /proc/self/io: `wchar` (bytes handed to write(2)/pwrite(2): WAL
// frames, checkpoints, the CSV appends) and `write_bytes` (bytes the kernel sends to the block
// device, page-rounded: what wears an SD card); plus the files' sizes at the end.
//
// Usage: disk-bench [--hours H] [--visits-per-hour N] [--seed S] [--dir PATH]
//                   [--interval S] [--check-ins-within S] [--no-naive]
//   --interval S: how often open visits' progress is written (FlushPolicy.live: 600);
//   --check-ins-within S: how soon a check-in is committed (live: 120; 0 = at the next tick)
import AdvertCorpus
import BLEHost
import Foundation
import Herald
import VenueDiary

struct IO {
    var wchar = 0
    var writeBytes = 0

    static func now() -> IO {
        var io = IO()
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return io }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
            if parts[0] == "wchar" { io.wchar = value }
            if parts[0] == "write_bytes" { io.writeBytes = value }
        }
        return io
    }

    static func - (a: IO, b: IO) -> IO { IO(wchar: a.wchar - b.wchar, writeBytes: a.writeBytes - b.writeBytes) }
}

struct Guest {
    var arrive: Double
    var leave: Double
    var payload: [UInt8]
    var address: BluetoothAddress
    var baseRSSI: Int
}

let hours = option("--hours", default: 6)
let perHour = option("--visits-per-hour", default: 300)
var rng = SplitMix64(seed: UInt64(option("--seed", default: 7)))
let t0 = CaptureGenerator.startTime
let span = Double(hours) * 3600

var drawn: [Guest] = []
for k in 0..<(hours * perHour * 4 / 3) {
    let walkPast = k % 4 == 3
    let arrive = t0 + Double(rng.below(Int(span)))
    let roll = rng.below(10)
    let stay: Double = walkPast ? Double(10 + rng.below(50))
        : roll < 2 ? Double(300 + rng.below(600)) : roll < 7 ? Double(900 + rng.below(2700)) : Double(3600 + rng.below(7200))
    drawn.append(Guest(
        arrive: arrive, leave: arrive + stay, payload: CorpusDevice.heraldPayload(index: k),
        address: BluetoothAddress(rawValue: 0x4100_0000_0000 | UInt64(k)), baseRSSI: -55 - rng.below(30)))
}
let guests = drawn.sorted { $0.arrive < $1.arrive }
let end = t0 + span + 3 * 3600  // guests who came late stay on after closing: follow them out

let dir = option("--dir") ?? FileManager.default.temporaryDirectory.appendingPathComponent("disk-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { if option("--dir") == nil { try? FileManager.default.removeItem(atPath: dir) } }

/// Walks the venue second by second, calling `measure` for every guest present.
func walk(_ guests: [Guest], _ measure: (Int, Double, Int) throws -> Void, tick: (Double) throws -> Void) rethrows -> Int {
    var present: [Int] = []
    var next = 0
    var samples = 0
    var t = t0
    while t < end {
        while next < guests.count, guests[next].arrive <= t {
            present.append(next)
            next += 1
        }
        present.removeAll { guests[$0].leave < t }
        for g in present {
            try measure(g, t, guests[g].baseRSSI + Int(UInt64(t) &* 2_654_435_761 &+ UInt64(g)) % 7 - 3)
        }
        samples += present.count
        try tick(t)
        t += 1
    }
    return samples
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}

func mb(_ bytes: Int) -> String { String(format: "%.3f MB", Double(bytes) / 1_000_000) }

// 1. The real diary.
let diaryPath = dir + "/diary.sqlite"
let store = try DiaryStore(path: diaryPath)
let interval = Double(option("--interval", default: Int(FlushPolicy.live.interval)))
let checkInsWithin = Double(option("--check-ins-within", default: Int(FlushPolicy.live.checkInsWithin)))
let policy = FlushPolicy(interval: interval, maxPendingChanges: FlushPolicy.live.maxPendingChanges, checkInsWithin: checkInsWithin)
var diary = try VenueDiary(store: store, settings: DiarySettings(), now: t0, policy: policy)
var keys: [VisitKey?] = Array(repeating: nil, count: guests.count)
var checkIns = 0
var hourly: [IO] = []
let diaryStart = IO.now()
var hourStart = diaryStart
let diarySamples = try walk(guests, { g, t, rssi in
    if let key = keys[g], diary.record(key, time: t, rssi: rssi) { return }
    do {
        let key = diary.key(for: .herald, payload: guests[g].payload)
        keys[g] = key
        diary.record(key, time: t, rssi: rssi)
    }
}, tick: { t in
    for change in try diary.tick(now: t) where change.event == .checkedIn { checkIns += 1 }
    if Int(t - t0 + 1) % 3600 == 0 {
        let io = IO.now()
        hourly.append(io - hourStart)
        hourStart = io
    }
})
try diary.close(now: end)
let diaryIO = IO.now() - diaryStart
let diaryFiles = fileSize(diaryPath) + fileSize(diaryPath + "-wal") + fileSize(diaryPath + "-shm")
let visits = try store.stats().visits

let venueHours = (end - t0) / 3600
print("disk-bench: \(hours) h open + 3 h to empty (\(Int(venueHours)) venue hours), \(perHour) visits/hour arriving + walk-pasts; \(grouped(diarySamples)) measurements (1 per phone per second)")
print("diary     policy: refresh every \(Int(interval)) s, check-ins within \(Int(checkInsWithin)) s; \(grouped(visits)) visits written (\(checkIns) check-ins), \(diary.committedBatches) transactions")
print("diary     wchar \(mb(diaryIO.wchar)) = \(mb(diaryIO.wchar * 3600 / Int(end - t0)))/venue hour, write_bytes \(mb(diaryIO.writeBytes)) = \(mb(diaryIO.writeBytes * 3600 / Int(end - t0)))/venue hour; files at end \(mb(diaryFiles))")
print("diary     per venue hour (wchar / write_bytes): " + hourly.map { "\(mb($0.wchar)) / \(mb($0.writeBytes))" }.joined(separator: ", "))
if flag("--no-naive") { exit(0) }

// 2. The naive design: a row per measurement.
let logDir = dir + "/herald-logs"
try FileManager.default.createDirectory(atPath: logDir, withIntermediateDirectories: true)
var logs = HeraldLogWriter(
    directory: logDir, detection: DetectionLog(deviceName: "venue", operatingSystemVersion: "12", ownPayload: [0x30, 1, 2]),
    statistics: StatisticsLog(ownPayload: [0x30, 1, 2]))
let naiveStart = IO.now()
let naiveSamples = try walk(guests, { g, t, rssi in
    let target = Target(id: TargetID(rawValue: UInt64(g + 1)), address: guests[g].address, addressType: .random)
    logs.record(.measure(target, rssi: rssi, payload: SensorPayload(kind: .herald, bytes: guests[g].payload), time: t), wallTime: t)
}, tick: { t in
    if Int(t) % 5 == 0 { try logs.flush(now: t) }
})
try logs.flush(now: end)
let naiveIO = IO.now() - naiveStart
let contacts = fileSize(logDir + "/contacts.csv")

print("naive     \(grouped(naiveSamples)) rows: contacts.csv \(mb(contacts)) = \(mb(contacts * 3600 / Int(end - t0)))/venue hour; wchar \(mb(naiveIO.wchar)) = \(mb(naiveIO.wchar * 3600 / Int(end - t0)))/venue hour, write_bytes \(mb(naiveIO.writeBytes)) = \(mb(naiveIO.writeBytes * 3600 / Int(end - t0)))/venue hour")
print(String(format: "ratio     naive / diary (wchar): %.0f×", Double(naiveIO.wchar) / Double(max(diaryIO.wchar, 1))))
