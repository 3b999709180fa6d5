import AdvertCorpus
import Foundation

/// What advert-bench prints: a line per stage (or with `--json` a JSON object per stage, the
/// peer's as its script printed them, with the source added), then the peer's rates and ours
/// divided by them (thread CPU).
struct Output {
    let adverts: Adverts
    let runs: Int
    let json: Bool

    private var reports: Int { adverts.reportCount }

    func header(devices: Int?) {
        guard !json else { return }
        let from = devices.map { "stream \(adverts.name) (\($0) devices)" } ?? adverts.name
        print("advert-bench: \(from): \(grouped(adverts.events.count)) events, \(grouped(reports)) reports, \(runs) runs per stage")
        print("stage           reports/s (CPU)  reports/s (wall)  ns/report  runs (CPU reports/s)      check")
    }

    func stage(_ name: String, _ result: StageResult) {
        let cpu = result.cpuRates(reports: reports), wall = result.wallRates(reports: reports)
        if json {
            print(
                "{\"stage\":\"\(name)\",\"source\":\(quoted(adverts.name)),\"reports\":\(reports),"
                    + "\"cpu_rates\":[\(cpu.map { String(Int($0)) }.joined(separator: ","))],\"median_cpu_rate\":\(Int(median(cpu))),"
                    + "\"median_wall_rate\":\(Int(median(wall))),\"ns_per_report\":\(String(format: "%.1f", 1e9 / median(cpu))),"
                    + "\"check\":\(result.check)}")
            return
        }
        let range = "\(millions(cpu.min() ?? 0))–\(millions(cpu.max() ?? 0)) M"
        print(
            pad(name, 16) + pad(grouped(Int(median(cpu))), 17) + pad(grouped(Int(median(wall))), 18)
                + pad(String(format: "%.1f", 1e9 / median(cpu)), 11) + pad(range, 26) + String(result.check))
        if let note = result.note { print("  \(name): \(note)") }
    }

    func peer(_ rows: [PeerRow], ours: [Stage: StageResult]) {
        if json {
            for row in rows { print("{\"source\":\(quoted(adverts.name))," + row.json.dropFirst()) }
            return
        }
        for row in rows {
            print(
                pad(row.stage, 20) + pad(grouped(Int(row.cpuRate)), 13) + pad(grouped(Int(row.wallRate)), 18)
                    + pad(String(format: "%.1f", 1e9 / row.cpuRate), 11) + "\(row.peer), \(grouped(row.distinctAdverts)) distinct adverts")
        }
        var ratios: [String] = []
        for stage in [Stage.classify, .fullParse] {
            guard let result = ours[stage] else { continue }
            let rate = median(result.cpuRates(reports: reports))
            for row in rows {
                ratios.append("\(stage.rawValue) ÷ \(row.stage) \(String(format: "%.2f", rate / row.cpuRate))×")
            }
        }
        if !ratios.isEmpty { print("ours / peer (thread CPU): " + ratios.joined(separator: "; ")) }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text.padding(toLength: width, withPad: " ", startingAt: 0)
    }

    private func millions(_ rate: Double) -> String { String(format: "%.2f", rate / 1e6) }

    private func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
