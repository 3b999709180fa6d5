// seal-bench: what sealing (age, X25519) and signing (minisign, BLAKE2b-512 + Ed25519) cost on
// an export of the whole diary, beside the plain export to the same kind of file (issue 17).
//
//   seal-bench [--visits N] [--diary PATH]
//
// Fills a diary with N visits (default 1,000,000; reused at PATH when it already holds them),
// then runs each export in a child process of its own, so each reports its own peak resident
// memory: `plain` streams the CSV to a file (fsynced), `sealed` streams the same CSV through
// the product's ExportSealer (age STREAM chunks, hashing what goes out) to a file (fsynced) and
// writes the .minisig. Best of 3 runs each. With /usr/bin/age, the sealed file is opened with
// a generated identity and compared with the plain file.
import Appliance
import Foundation
import Glibc
import VenueDiary

struct BenchError: Error { var message: String }

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func peakMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

func payload(_ i: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 129)
    var x = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
    for j in bytes.indices {
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27
        bytes[j] = UInt8(truncatingIfNeeded: x &* 0x2545_F491_4F6C_DD1D)
    }
    return bytes
}

let venue = VenueIdentity(country: 826, state: 4, code: 123_123, name: "Bench Arms")
let t0 = 1_700_000_000.0

func fill(_ path: String, count: Int) throws {
    let store = try DiaryStore(path: path)
    guard try store.stats().visits < count else { return }
    var batch: [Visit] = []
    for i in 0..<count {
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
}

/// One export in this (child) process; prints `wall cpu peakMiB bytes`.
func child(mode: String, diary: String, out: String, keyDir: String) throws {
    let store = try DiaryStore(path: diary, readOnly: true)
    guard FileManager.default.createFile(atPath: out, contents: nil), let handle = FileHandle(forWritingAtPath: out) else {
        throw BenchError(message: "cannot create \(out)")
    }
    let clock = ContinuousClock()
    let start = clock.now, cpu = cpuSeconds()
    var bytes = 0
    if mode == "plain" {
        try DiaryExport.export(.csv, from: store, window: .all, venue: venue, generatedAt: t0) {
            try handle.write(contentsOf: $0)
            bytes += $0.count
        }
    } else {
        let identity = try String(contentsOfFile: keyDir + "/tracers.key", encoding: .utf8)
        let recipient = try AgeIdentity.parse(identity).get().recipient
        let key = try NodeSigningKey.loadOrCreate(at: keyDir + "/node.key").key
        let sealer = try ExportSealer(sealing: ExportSealing(recipients: [recipient], key: key)) { try handle.write(contentsOf: $0) }
        let summary = try DiaryExport.export(.csv, from: store, window: .all, venue: venue, generatedAt: t0, to: sealer.write)
        let signature = try sealer.finish(trustedComment: "visits:\(summary.visits)", untrustedComment: "bench") ?? ""
        try Data(signature.utf8).write(to: URL(fileURLWithPath: out + ".minisig"))
        bytes = sealer.bytesOut
    }
    try handle.synchronize()
    try handle.close()
    print(seconds(clock.now - start), cpuSeconds() - cpu, peakMiB(), bytes)
}

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

func run(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw BenchError(message: "child \(arguments) failed") }
    return String(decoding: data, as: UTF8.self)
}

if let mode = argument("--child") {
    try child(mode: mode, diary: argument("--diary")!, out: argument("--out")!, keyDir: argument("--keys")!)
    exit(0)
}

let visits = Int(argument("--visits") ?? "") ?? 1_000_000
let scratch = NSTemporaryDirectory() + "seal-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: scratch) }
let diary = argument("--diary") ?? scratch + "/diary.sqlite"
try fill(diary, count: visits)
try (AgeIdentity.generate().encoded + "\n").write(toFile: scratch + "/tracers.key", atomically: true, encoding: .utf8)

var best: [String: [Double]] = [:]
for _ in 0..<3 {
    for mode in ["plain", "sealed"] {
        let fields = try run(["--child", mode, "--diary", diary, "--out", scratch + "/\(mode).out", "--keys", scratch])
            .split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        if best[mode].map({ fields[0] < $0[0] }) ?? true { best[mode] = fields }
    }
}
let plain = best["plain"]!, sealed = best["sealed"]!
func line(_ name: String, _ f: [Double]) -> String {
    String(format: "%-7@ %.0f bytes: %.2f s wall, %.2f s CPU, peak RSS %.1f MiB", name as NSString, f[3], f[0], f[1], f[2])
}
print("export of \(visits) visits, best of 3, each in its own process, to a file (fsynced)")
print(line("plain", plain))
print(line("sealed", sealed) + " (age + .minisig)")
print(String(format: "sealed / plain: %.2fx wall, %.2fx CPU", sealed[0] / plain[0], sealed[1] / plain[1]))
if FileManager.default.isExecutableFile(atPath: "/usr/bin/age") {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/age")
    process.arguments = ["-d", "-i", scratch + "/tracers.key", "-o", scratch + "/opened.csv", scratch + "/sealed.out"]
    try process.run()
    process.waitUntilExit()
    let same = FileManager.default.contentsEqual(atPath: scratch + "/opened.csv", andPath: scratch + "/plain.out")
    print("age -d of the sealed file: exit \(process.terminationStatus), \(same ? "identical to" : "DIFFERENT from") the plain export")
}
