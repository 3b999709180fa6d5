import AdvertCorpus

/// One timed run: thread CPU seconds (on a machine shared with other builds, time the thread was
/// not running is not counted) and wall seconds.
struct Timing {
    var cpu: Double
    var wall: Double
}

@inline(__always)
func timed(_ body: () -> Void) -> Timing {
    let cpu0 = threadCPUSeconds(), wall0 = wallSeconds()
    body()
    return Timing(cpu: threadCPUSeconds() - cpu0, wall: wallSeconds() - wall0)
}

/// A stage's measurement: one timing per run, a check value derived from the results (so the
/// optimiser keeps the work; the same in every run) and, for the pipelines, their end state.
struct StageResult {
    var timings: [Timing] = []
    var check = 0
    var note: String?

    func cpuRates(reports: Int) -> [Double] { timings.map { Double(reports) / $0.cpu } }
    func wallRates(reports: Int) -> [Double] { timings.map { Double(reports) / $0.wall } }
}

/// `body` timed `runs` times, each from a fresh count: the check is the last run's count.
@inline(__always)
func timedRuns(_ runs: Int, _ body: (inout Int) -> Void) -> StageResult {
    var result = StageResult()
    for _ in 0..<runs {
        var n = 0
        result.timings.append(timed { body(&n) })
        result.check = n
    }
    return result
}
