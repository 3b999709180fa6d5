// advert-bench: advertising reports per second on one core (one thread), release build, beside
// Home Assistant's `bluetooth-data-tools` parser as the peer (issue 3; issue 6, benchmark 1).
//
//   swift build -c release --package-path Benchmarks
//   Benchmarks/.build/release/advert-bench [CAPTURE.btsnoop ...] [--stream distinct|repeats ...]
//       [--reports N] [--devices N] [--stages STAGE,...] [--runs N] [--no-peer] [--python PATH] [--json]
//
// Sources of adverts: btsnoop captures (from capture-gen: a venue's corpus devices, realistic or
// distinct, several reports per event), or the in-memory streams built with the simulation's
// devices (``SimulatedStream``, by default both). Every stage (``Stage``) runs over every report
// of a source `--runs` times (5) in this process, timed in thread CPU time and wall time; a
// stage's figure is the median run. The peer runs in its own Python process on the same adverts
// (Benchmarks/peer/bdt_peer.py, cached and uncached parser, as many passes). Benchmarks/run
// drives it for BENCHMARKS.md (rounds interleaved with the peer, valgrind's counts).
import AdvertCorpus
import BLEHost
import Foundation
import Herald
import Simulation

let options = Options(CommandLine.arguments)
let classifier = try AdvertClassifier()
var simulatedDevices: [SimulatedDevice]?

for source in options.sources {
    let adverts: Adverts
    switch source {
    case .capture(let path):
        do { adverts = try Adverts(capture: path) } catch {
            FileHandle.standardError.write(Data("advert-bench: \(path): \(error)\n".utf8))
            exit(1)
        }
    case .stream(let name):
        let devices = simulatedDevices ?? SimulatedStream.venueDevices(options.devices)
        simulatedDevices = devices
        adverts = SimulatedStream.adverts(name, devices: devices, count: options.reports)
    }
    let stages = options.stages ?? Stage.allCases.filter { $0 != .capture || adverts.path != nil }
    if stages.contains(.capture) && adverts.path == nil { Options.fail("the capture stage needs a capture file") }
    let output = Output(adverts: adverts, runs: options.runs, json: options.json)
    output.header(devices: adverts.path == nil ? simulatedDevices?.count : nil)
    let peer = options.peer ? runPeer(adverts, python: options.python, passes: options.runs) : []
    var ours: [Stage: StageResult] = [:]
    for stage in stages {
        let result = try measure(stage, adverts, runs: options.runs, classifier: classifier)
        ours[stage] = result
        output.stage(stage.rawValue, result)
    }
    output.peer(peer, ours: ours)
}
