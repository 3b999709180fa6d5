// advert-bench: the advertising-report pipeline on one core, and the same adverts through Home
// Assistant's `bluetooth-data-tools` parser as the peer (issue 6, benchmark 1).
//
//   swift build -c release --package-path Benchmarks
//   Benchmarks/.build/release/advert-bench [--reports N] [--devices N] [--no-peer] [--runs N]
//       [--stream distinct|repeats] [--pipeline-only]     (one stream or one stage, for a profiler)
//
// Each of our stages runs `--runs` times (5) in the same process, each pipeline run from a fresh
// node and diary; the table shows the median run and the pipeline's line the slowest and fastest
// (these VMs vary by a quarter from one minute to the next).
//
// Two streams of LE Advertising Report events (one report per event, as controllers mostly send
// them), built with the simulation's devices and the controller-side HCI encoder:
//   distinct  every advert differs (addresses, pseudo addresses, RPIs, Apple data): no cache helps;
//   repeats   `--devices` devices (a venue's mix) repeating their adverts, RSSI varying.
// Stages timed per stream:
//   classify  AD parse + Herald classification of each report's data (flags only, nothing
//             allocated);
//   parse     the full parse the peer does (`ParsedAdvert`: name, service UUIDs as strings,
//             service data, manufacturer data, TX power), objects allocated as the peer's are;
//             beside it the peer's cached parser (what Home Assistant calls) and its uncached one,
//             in one peer process, median of the same number of passes;
//   decode    HCI event decode + report iteration + classification into an AdvertSighting;
//   pipeline  decode + the Herald node's policy (target table, measurements, reads) + the
//             DiaryPipeline into the presence tracker and the SQLite diary, with a clock tick per
//             simulated second. Connections the node asks for are answered at once (payload read)
//             so that known payloads reach the presence tracker as in a venue.
import BLEHost
import Foundation
import Herald
import Simulation
import VenueDiary
import VenueNode

struct Options {
    var reports = 1_000_000
    var devices = 500
    var peer = true
    var streams = ["distinct", "repeats"]
    var pipelineOnly = false
    var runs = 5

    init(_ arguments: [String]) {
        var i = 1
        while i < arguments.count {
            switch arguments[i] {
            case "--reports": i += 1; reports = Int(arguments[i]) ?? reports
            case "--devices": i += 1; devices = Int(arguments[i]) ?? devices
            case "--no-peer": peer = false
            case "--stream": i += 1; streams = [arguments[i]]
            case "--pipeline-only": pipelineOnly = true; peer = false
            case "--runs": i += 1; runs = max(1, Int(arguments[i]) ?? runs)
            default: FileHandle.standardError.write(Data("unknown argument \(arguments[i])\n".utf8))
            }
            i += 1
        }
    }
}

/// A stream of adverts, packed as a controller's reads leave them: event packets back to back in
/// one buffer, and the AD bytes inside each beside them. A node decodes each packet from its read
/// buffer while it is in cache; a million separately allocated arrays would make the harness
/// measure cache misses the node never has.
struct AdvertStream {
    private var events: [UInt8] = []
    private var eventEnds: [Int] = []
    private var advertData: [UInt8] = []
    private var dataEnds: [Int] = []
    /// The device of each advert.
    private(set) var devices: [Int] = []

    var count: Int { devices.count }

    mutating func append(event: [UInt8], data: [UInt8], device: Int) {
        events.append(contentsOf: event)
        eventEnds.append(events.count)
        advertData.append(contentsOf: data)
        dataEnds.append(advertData.count)
        devices.append(device)
    }

    /// The i-th HCI event packet body.
    func event(_ i: Int) -> ArraySlice<UInt8> { events[(i == 0 ? 0 : eventEnds[i - 1])..<eventEnds[i]] }

    /// The AD bytes of the i-th advert.
    func data(_ i: Int) -> ArraySlice<UInt8> { advertData[(i == 0 ? 0 : dataEnds[i - 1])..<dataEnds[i]] }
}

func event(for device: SimulatedDevice, address: BluetoothAddress, data: [UInt8], rssi: Int8) -> [UInt8] {
    let report = LEAdvertisingReport(
        eventType: device.isConnectable ? .connectableUndirected : .nonConnectableUndirected, addressType: .random,
        address: address, data: data[...], rawRSSI: rssi)
    return LEAdvertisingReports.packet([report]).body
}

/// A venue's devices: phones of the standard mix plus accessories and other devices.
func venueDevices(_ count: Int) -> [SimulatedDevice] {
    let truth = VenueModel.generate(VenueConfiguration(visitors: count, openingHours: 3, seed: 2026, walkPasts: 0))
    return Array(truth.devices.filter { $0.advert != nil }.prefix(count))
}

func repeatsStream(_ devices: [SimulatedDevice], count: Int) -> AdvertStream {
    var random = SimulationRandom(seed: 7)
    let data = devices.map { $0.advertisingData(epoch: 0) }
    var stream = AdvertStream()
    for _ in 0..<count {
        let k = random.below(devices.count)
        let rssi = Int8(-50 - random.below(45))
        stream.append(event: event(for: devices[k], address: devices[k].rotation.address(ofEpoch: 0), data: data[k], rssi: rssi), data: data[k], device: k)
    }
    return stream
}

func distinctStream(_ devices: [SimulatedDevice], count: Int) -> AdvertStream {
    var random = SimulationRandom(seed: 8)
    var stream = AdvertStream()
    for i in 0..<count {
        let k = i % devices.count
        let device = devices[k]
        let epoch = Int64(i)
        var data = device.advertisingData(epoch: epoch)
        switch device.advert {
        case .heraldAndroid?:
            // A new pseudo device address in the last six bytes.
            var pseudo = [UInt8]()
            PseudoDeviceAddress(rawValue: UInt64(i) &* 0x9E37_79B9).append(to: &pseudo)
            data.replaceSubrange((data.count - 6)..., with: pseudo)
        case .heraldService?:
            break  // nothing to vary but the address: its data ends in the TX power level, after the 0xFCF6 list
        case .apple?, .other?:
            // Vary the last two bytes (Apple data stays what it was for the filter).
            if data.count >= 2 {
                data[data.count - 1] = UInt8(truncatingIfNeeded: i)
                data[data.count - 2] = UInt8(truncatingIfNeeded: i >> 8) | 0x01
            }
        case .exposureNotification?, nil:
            break  // a new RPI per epoch already
        }
        let address = device.rotation.address(ofEpoch: epoch)
        stream.append(event: event(for: device, address: address, data: data, rssi: Int8(-50 - random.below(45))), data: data, device: k)
    }
    return stream
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

struct Timing {
    var wall: Double
    var cpu: Double
}

func measure(_ body: () -> Void) -> Timing {
    let clock = ContinuousClock()
    let cpu0 = cpuSeconds()
    let start = clock.now
    body()
    let c = start.duration(to: clock.now).components
    return Timing(wall: Double(c.seconds) + Double(c.attoseconds) * 1e-18, cpu: cpuSeconds() - cpu0)
}

/// The run with the median wall time.
func median(_ runs: [Timing]) -> Timing {
    runs.sorted { $0.wall < $1.wall }[runs.count / 2]
}

/// Keeps results alive so the optimiser cannot drop the work.
nonisolated(unsafe) var sink = 0

func classifyStage(_ stream: AdvertStream, _ classifier: AdvertClassifier) -> Timing {
    measure {
        var n = 0
        for i in 0..<stream.count {
            if case .herald = classifier.classify(stream.data(i)) { n += 1 }
        }
        sink &+= n
    }
}

func parseStage(_ stream: AdvertStream) -> Timing {
    var names = UUIDNames()
    return measure {
        var n = 0
        for i in 0..<stream.count {
            let parsed = ParsedAdvert(stream.data(i), names: &names)
            n &+= parsed.serviceUUIDs.count &+ parsed.serviceData.count &+ parsed.manufacturerData.count
        }
        sink &+= n
    }
}

func decodeStage(_ stream: AdvertStream, _ classifier: AdvertClassifier) -> Timing {
    measure {
        var n = 0
        for i in 0..<stream.count {
            guard case .le(.advertisingReport(let reports))? = try? HCIEvent(decoding: stream.event(i)) else { continue }
            for report in reports {
                let sighting = AdvertSighting(report: report, classifier: classifier)
                if sighting.connectable == true { n += 1 }
            }
        }
        sink &+= n
    }
}

/// The whole pipeline's state, owned by one value as the node's own loop owns its driver: its
/// methods run the stream with static exclusivity (state captured by closures is checked at
/// run time on every access, which measured a fifth of this stage before).
struct PipelineRun {
    let devices: [SimulatedDevice]
    let classifier: AdvertClassifier
    let origin = VenueConfiguration.defaultOrigin
    let reportsPerSecond: Double
    var pipeline: DiaryPipeline
    var node = SensorNode()
    var actions: [NodeAction] = []
    /// Which device an address belongs to, for answering the node's connections at once: the
    /// harness's own bookkeeping, built before the clock starts.
    var deviceOf: [BluetoothAddress: Int] = [:]
    var errors = 0
    /// Link actions are answered at once, at the time of the advert or tick that caused them.
    var now = 0.0

    init(_ stream: AdvertStream, devices: [SimulatedDevice], classifier: AdvertClassifier, diaryPath: String) throws {
        self.devices = devices
        self.classifier = classifier
        reportsPerSecond = Double(devices.count) * 4
        pipeline = DiaryPipeline(diary: try VenueDiary(store: try DiaryStore(path: diaryPath), settings: DiarySettings(), now: origin))
        deviceOf.reserveCapacity(min(stream.count, devices.count * 4096))
        for i in 0..<stream.count {
            guard case .le(.advertisingReport(let reports))? = try? HCIEvent(decoding: stream.event(i)) else { continue }
            for report in reports { deviceOf[report.address] = stream.devices[i] }
        }
    }

    mutating func perform() {
        var i = 0
        while i < actions.count {
            let action = actions[i]
            i += 1
            var answer: (LinkEvent, TargetID)? = nil
            switch action {
            case .event(let event): pipeline.handle(event, wallOffset: origin)
            case .connect(let t): answer = (.connected, t.id)
            case .discover(let t, _):
                let kind = deviceOf[t.address].map { devices[$0].kind }
                let services: DiscoveredServices =
                    kind == .heraldAndroid ? .android : (kind == .heraldIPhoneBackground || kind == .heraldIPhoneForeground ? .iPhone : .none)
                answer = (.discovered(services), t.id)
            case .readPayload(let t, _):
                answer = (.payloadRead(deviceOf[t.address].flatMap { devices[$0].payload } ?? []), t.id)
            case .writeSignal(let t, _): answer = (.signalWritten, t.id)
            case .disconnect(let t): answer = (.disconnected, t.id)
            case .immediateData: break
            }
            if let (event, id) = answer { node.link(event, target: id, now: now, into: &actions) }
        }
        actions.removeAll(keepingCapacity: true)
    }

    @inline(never)  // a frame of its own, for profilers
    mutating func run(_ stream: AdvertStream) {
        var second = 0.0
        for i in 0..<stream.count {
            now = Double(i) / reportsPerSecond
            if now >= second {
                node.tick(now: now, into: &actions)
                perform()
                do { _ = try pipeline.tick(now: origin + now) } catch { errors += 1 }
                second += 1
            }
            guard case .le(.advertisingReport(let reports))? = try? HCIEvent(decoding: stream.event(i)) else { continue }
            for report in reports {
                node.advert(AdvertSighting(report: report, classifier: classifier), now: now, into: &actions)
            }
            perform()
        }
        do { _ = try pipeline.close(now: origin + Double(stream.count) / reportsPerSecond) } catch { errors += 1 }
    }
}

/// The whole pipeline; returns its timing, the visits the diary holds at the end, write errors
/// and the targets the node follows at the end.
func pipelineStage(_ stream: AdvertStream, devices: [SimulatedDevice], classifier: AdvertClassifier, label: String) throws -> (Timing, Int, Int, Int, String) {
    let path = NSTemporaryDirectory() + "advert-bench-\(getpid())-\(label).sqlite"
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    var run = try PipelineRun(stream, devices: devices, classifier: classifier, diaryPath: path)
    let timing = measure { run.run(stream) }
    let visits = (try? run.pipeline.diary.store.stats().visits) ?? -1
    let held = "\(run.pipeline.diary.tracker.trackedIdentities) identities in the presence tracker, \(run.pipeline.cachedKeys) keys cached"
    return (timing, visits, run.errors, run.node.targetCount, held)
}

/// The peer's rates (reports/s, median of `passes`): its cached parser and its uncached one.
func peer(_ stream: AdvertStream, label: String, passes: Int) -> (cached: Double, uncached: Double)? {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("peer.py").path
    let path = NSTemporaryDirectory() + "advert-bench-\(getpid())-\(label).bin"
    var bytes = [UInt8]()
    for i in 0..<stream.count {
        bytes.append(UInt8(stream.data(i).count))
        bytes.append(contentsOf: stream.data(i))
    }
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return nil }
    defer { try? FileManager.default.removeItem(atPath: path) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script, path, String(passes)]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { return nil }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    let rates = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    guard rates.count == 2 else { return nil }
    return (rates[0], rates[1])
}

let options = Options(CommandLine.arguments)
let devices = venueDevices(options.devices)
let classifier = try AdvertClassifier()
print("advert-bench: \(options.reports) reports per stream; repeats over \(devices.count) devices")
print("stream    stage     reports/s (wall)  reports/s (CPU)  peer reports/s  ours/peer")
for label in options.streams {
    let stream = label == "distinct" ? distinctStream(devices, count: options.reports) : repeatsStream(devices, count: options.reports)
    let n = Double(stream.count)
    let peerRates = options.peer ? peer(stream, label: label, passes: options.runs) : nil
    var pipelineRuns: [Timing] = []
    var (visits, errors, targets, held) = (0, 0, 0, "")
    for _ in 0..<options.runs {
        let (timing, v, e, t, h) = try pipelineStage(stream, devices: devices, classifier: classifier, label: label)
        pipelineRuns.append(timing)
        (visits, errors, targets, held) = (v, e, t, h)
    }
    func row(_ stage: String, _ t: Timing, peer: Double?) {
        let ratio = peer.map { String(format: "%.2f", n / t.wall / $0) } ?? "–"
        let peerText = peer.map { String(format: "%.0f", $0) } ?? "–"
        print(
            label.padding(toLength: 10, withPad: " ", startingAt: 0) + stage.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(format: "%-18.0f%-17.0f", n / t.wall, n / t.cpu) + peerText.padding(toLength: 16, withPad: " ", startingAt: 0)
                + ratio)
    }
    if !options.pipelineOnly {
        row("classify", median((0..<options.runs).map { _ in classifyStage(stream, classifier) }), peer: peerRates?.cached)
        let parse = median((0..<options.runs).map { _ in parseStage(stream) })
        row("parse", parse, peer: peerRates?.cached)
        if let uncached = peerRates?.uncached {
            print(String(format: "          parse against the peer's uncached parser: %.0f reports/s, ours/peer %.2f", uncached, n / parse.wall / uncached))
        }
        row("decode", median((0..<options.runs).map { _ in decodeStage(stream, classifier) }), peer: peerRates?.cached)
    }
    row("pipeline", median(pipelineRuns), peer: nil)
    let rates = pipelineRuns.map { n / $0.wall }
    print(
        "          pipeline: \(options.runs) runs \(String(format: "%.0f–%.0f", rates.min() ?? 0, rates.max() ?? 0)) reports/s (wall); "
            + "\(visits) visits in the diary, \(errors) write errors; at the end \(targets) targets followed, \(held)")
}
