// hub-bench: the in-process parts of the venue hub's benchmarks (issue 23). The broker, the hub
// and `venue-beacon replicate` are real processes driven by Benchmarks/hub/run (hub_bench.py);
// this executable makes their inputs and drives a node's replicator in-process.
//
//   hub-bench batches --out DIR --node NAME --batches N [--seed S]
//       Writes N consecutive visit batches (200 visits each, the node's batch size) of one new
//       diary as DIR/NAME-00001.bin …, as a node publishes them; prints a JSON line with the
//       diary id, the last change and the bytes.
//   hub-bench fill --diary PATH --visits N [--seed S]
//       Fills a node diary (DiaryStore.save, 5,000 a transaction) with N closed visits.
//   hub-bench latency --broker URL --node NAME --password-file F --diary PATH
//                     [--seconds 60] [--mean-interval 0.25] [--seed S]
//       Runs the node's replication as `venue-beacon run` does (NodeReplicator.run on a thread
//       of its own, with the service's status and last will) while this thread closes visits
//       into the same diary (its own DiaryStore, as the diary keeper has its own), one at a time
//       at exponential intervals. An observer (mosquitto_sub under the node's login, another
//       client id) hears every acknowledgement the hub publishes. Latency of a visit: from just
//       before its save to the first acknowledgement whose change covers it. Prints a JSON line.
//
// Visits are the 10,000-phone crowd's mix (run-bench): 60 % GAEN (16-byte identifier and 4 bytes
// of metadata), 40 % Herald (129-byte payloads, as seal-bench's), checked out within the last day.
import Appliance
import Foundation
import Glibc
import Replication
import Synchronization
import VenueDiary

struct BenchError: Error, CustomStringConvertible { var description: String }

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func required(_ name: String) throws -> String {
    guard let value = argument(name) else { throw BenchError(description: "\(name) is required") }
    return value
}

struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// One closed visit of the crowd's mix, checked out within the last day.
func makeVisit(_ index: Int, _ random: inout SplitMix, now: Double) -> Visit {
    let gaen = random.next() % 10 < 6
    let checkOut = now - 86_400 + Double(index % 80_000)
    let checkIn = checkOut - 300 - Double(random.next() % 3000)
    let samples = 20 + Int(random.next() % 400)
    return Visit(
        kind: gaen ? .gaen : .herald, payload: random.bytes(gaen ? 16 : 129), checkIn: checkIn, lastSeen: checkOut,
        checkOut: checkOut, samples: samples, rssiMax: -40 - Int(random.next() % 30), rssiSum: samples * (-60 - Int(random.next() % 20)),
        metadata: gaen ? random.bytes(4) : nil)
}

func batches() throws {
    let out = try required("--out"), node = try required("--node")
    let count = Int(try required("--batches"))!
    var random = SplitMix(state: UInt64(argument("--seed") ?? "1")!)
    let now = Date().timeIntervalSince1970
    let diary = UUID().uuidString.lowercased()
    let size = ReplicationSender.Options().batchSize
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    var change: Int64 = 0
    var bytes = 0
    for b in 0..<count {
        let prev = change
        var visits: [ReplicatedVisit] = []
        for i in 0..<size {
            change += 1 + Int64(random.next() % 2)  // a diary's changes have holes (superseded checkpoints)
            visits.append(ReplicatedVisit(change: change, visit: { var v = makeVisit(b * size + i, &random, now: now); v.id = Int64(b * size + i + 1); return v }()))
        }
        let encoded = VisitBatch(diary: diary, prev: prev, visits: visits).encoded()
        bytes += encoded.count
        try Data(encoded).write(to: URL(fileURLWithPath: "\(out)/\(node)-\(String(format: "%05d", b + 1)).bin"))
    }
    print(#"{"node":"\#(node)","diary":"\#(diary)","batches":\#(count),"visits":\#(count * size),"last":\#(change),"bytes":\#(bytes)}"#)
}

func fill() throws {
    let path = try required("--diary")
    let count = Int(try required("--visits"))!
    var random = SplitMix(state: UInt64(argument("--seed") ?? "1")!)
    let now = Date().timeIntervalSince1970
    let store = try DiaryStore(path: path)
    var chunk: [Visit] = []
    for i in 0..<count {
        chunk.append(makeVisit(i, &random, now: now))
        if chunk.count == 5000 || i == count - 1 {
            try store.save(chunk)
            chunk.removeAll(keepingCapacity: true)
        }
    }
    print(#"{"diary":"\#(path)","visits":\#(try store.stats().visits),"last_change":\#(try store.lastChange())}"#)
}

final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

/// Acknowledgements heard by the observer: (time, acked), in order.
final class Acks: Sendable {
    let list = Mutex<[(Double, Int64)]>([])
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

func latency() throws {
    let brokerURL = try required("--broker"), node = try required("--node")
    let passwordFile = try required("--password-file"), diaryPath = try required("--diary")
    let seconds = Double(argument("--seconds") ?? "60")!
    let meanInterval = Double(argument("--mean-interval") ?? "0.25")!
    var random = SplitMix(state: UInt64(argument("--seed") ?? "7")!)
    guard let broker = try? BrokerAddress.parse(brokerURL).get() else { throw BenchError(description: "bad broker \(brokerURL)") }
    let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)

    let writer = try DiaryStore(path: diaryPath)
    let diary = try writer.diaryID()

    // The observer: every acknowledgement, with mosquitto_sub's own receive time (%U).
    let observer = Process()
    observer.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
    observer.arguments = [
        "-oL", "mosquitto_sub", "-h", broker.host, "-p", "\(broker.port)", "-V", "mqttv5", "-u", node, "-P", password,
        "-i", "\(node)-ack-observer", "-q", "1", "-t", ReplicationTopic.ack(node), "-F", "%U %x",
    ]
    let pipe = Pipe()
    observer.standardOutput = pipe
    try observer.run()
    let acks = Acks()
    let reader = Thread {
        let handle = pipe.fileHandleForReading
        var buffer = Data()
        while true {
            let data = handle.availableData
            if data.isEmpty { break }
            buffer.append(data)
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                let parts = line.split(separator: " ")
                guard parts.count == 2, let time = Double(parts[0]) else { continue }
                var bytes: [UInt8] = []
                var hex = parts[1].utf8.makeIterator()
                while let hi = hex.next(), let lo = hex.next() { bytes.append(UInt8(String(decoding: [hi, lo], as: UTF8.self), radix: 16)!) }
                if let ack = try? HubAck(decoding: bytes), ack.diary == diary { acks.list.withLock { $0.append((time, ack.acked)) } }
            }
        }
    }
    reader.start()

    // The node's replication, as ReplicationWorker runs it in `venue-beacon run`.
    let settings = ReplicationSettings(broker: broker, node: node, passwordFile: passwordFile)
    let stop = Flag(), stopped = Flag()
    let replication = Thread {
        defer { stopped.value.store(true, ordering: .sequentiallyConsistent) }
        do {
            let replicator = try NodeReplicator(settings: settings, store: try DiaryStore(path: diaryPath), publishesStatus: true, clockSynchronised: { true })
            if let refusal = replicator.run(until: { stop.value.load(ordering: .sequentiallyConsistent) }) {
                FileHandle.standardError.write(Data("refused: \(refusal)\n".utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("replicator: \(error)\n".utf8))
        }
    }
    replication.start()

    // Let the replicator connect and send what the diary already holds.
    let settle = Date().timeIntervalSince1970 + 3
    while Date().timeIntervalSince1970 < settle { usleep(50_000) }

    var closes: [(time: Double, change: Int64)] = []
    let now0 = Date().timeIntervalSince1970
    let end = now0 + seconds
    var index = 1_000_000
    var next = now0
    while true {
        next += -log(max(random.unit(), 1e-12)) * meanInterval
        if next >= end { break }
        let wait = next - Date().timeIntervalSince1970
        if wait > 0 { usleep(UInt32(wait * 1e6)) }
        let visit = makeVisit(index, &random, now: Date().timeIntervalSince1970)
        index += 1
        let closed = Date().timeIntervalSince1970
        try writer.save([visit])
        closes.append((closed, try writer.lastChange()))
    }
    // Wait (at most 30 s) for the last visit's acknowledgement.
    let last = closes.last?.change ?? 0
    let deadline = Date().timeIntervalSince1970 + 30
    while Date().timeIntervalSince1970 < deadline, (acks.list.withLock { $0.last?.1 } ?? 0) < last { usleep(20_000) }
    stop.value.store(true, ordering: .sequentiallyConsistent)
    while !stopped.value.load(ordering: .sequentiallyConsistent) { usleep(10_000) }
    observer.terminate()
    observer.waitUntilExit()

    let heard = acks.list.withLock { $0 }
    var latencies: [Double] = []
    var missing = 0
    for close in closes {
        guard let ack = heard.first(where: { $0.1 >= close.change && $0.0 >= close.time }) else {
            missing += 1
            continue
        }
        latencies.append(ack.0 - close.time)
    }
    latencies.sort()
    let mean = latencies.isEmpty ? Double.nan : latencies.reduce(0, +) / Double(latencies.count)
    func f(_ x: Double) -> String { String(format: "%.3f", x) }
    print(
        #"{"visits":\#(closes.count),"acknowledged":\#(latencies.count),"missing":\#(missing),"acks_heard":\#(heard.count),"#
            + #""p50":\#(f(percentile(latencies, 50))),"p95":\#(f(percentile(latencies, 95))),"p99":\#(f(percentile(latencies, 99))),"#
            + #""max":\#(f(latencies.last ?? .nan)),"min":\#(f(latencies.first ?? .nan)),"mean":\#(f(mean))}"#)
}

do {
    switch CommandLine.arguments.dropFirst().first {
    case "batches": try batches()
    case "fill": try fill()
    case "latency": try latency()
    default:
        FileHandle.standardError.write(Data("usage: hub-bench batches|fill|latency … (see the comment at the top of main.swift)\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("hub-bench: \(error)\n".utf8))
    exit(1)
}
