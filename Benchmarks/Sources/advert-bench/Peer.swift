import AdvertCorpus
import Foundation

/// The peer's figures for the same adverts: Home Assistant's `bluetooth-data-tools` parser,
/// cached (`parse_advertisement_data_bytes`, what its scanners call per advert) and uncached, run
/// by `Benchmarks/peer/bdt_peer.py` in its own Python process on the same capture (a stream built
/// in memory is written to a temporary capture first), with the same number of passes.
struct PeerRow {
    /// "peer-parse" (cached) or "peer-parse-uncached".
    var stage: String
    /// The library and its version.
    var peer: String
    var cpuRate: Double
    var wallRate: Double
    var distinctAdverts: Int
    /// The row as the script printed it.
    var json: String
}

func runPeer(_ adverts: Adverts, python: String, passes: Int) -> [PeerRow] {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("peer/bdt_peer.py").path
    var path = adverts.path ?? ""
    if adverts.path == nil {
        path = NSTemporaryDirectory() + "advert-bench-\(getpid())-\(adverts.name).btsnoop"
        guard FileManager.default.createFile(atPath: path, contents: Data(adverts.btsnoop())) else { return [] }
    }
    defer { if adverts.path == nil { try? FileManager.default.removeItem(atPath: path) } }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [python, script, path, "--passes", String(passes), "--uncached", "--json"]
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch {
        FileHandle.standardError.write(Data("advert-bench: the peer did not start: \(error)\n".utf8))
        return []
    }
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        FileHandle.standardError.write(Data("advert-bench: the peer failed (\(python) \(script); needs bluetooth-data-tools)\n".utf8))
        return []
    }
    return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let stage = object["stage"] as? String, let cpu = object["median_cpu_rate"] as? Int, let wall = object["median_wall_rate"] as? Int
        else { return nil }
        return PeerRow(
            stage: stage, peer: object["peer"] as? String ?? "", cpuRate: Double(cpu), wallRate: Double(wall),
            distinctAdverts: object["distinct_adverts"] as? Int ?? 0, json: String(line))
    }
}
