/// `statistics.csv`: per payload, the seconds between its successive events (read, measurement
/// with an RSSI, share): `payload,count,mean,sd,min,max` (herald-for-android `StatisticsLog`;
/// intervals at millisecond accuracy as Herald takes them; `sd` is the sample standard
/// deviation; a payload appears once it has two intervals).
public struct StatisticsLog: Sendable {
    public static let header = "payload,count,mean,sd,min,max"

    /// Milliseconds of each payload's last event.
    private var lastTime: [String: Int64] = [:]
    private var intervals: [String: Distribution] = [:]
    private let ownShortName: String

    public init(ownPayload: [UInt8]) { ownShortName = heraldShortName(ownPayload) }

    /// Notes an event at `wallTime` (Unix seconds).
    public mutating func record(_ event: SensorEvent, wallTime: Double) {
        switch event {
        case .read(_, let payload, _, _), .measure(_, .some, .some(let payload), _, _):
            add(payload.shortName, wallTime)
        case .share(_, let payloads, _, _):
            for payload in payloads { add(payload.shortName, wallTime) }
        default:
            break
        }
    }

    private mutating func add(_ name: String, _ time: Double) {
        let now = HeraldLogFormat.milliseconds(time)
        defer { lastTime[name] = now }
        guard let last = lastTime[name] else { return }
        intervals[name, default: Distribution()].add(Double(now - last) / 1000)
    }

    /// The file's content.
    public var content: String {
        var out = Self.header + "\n"
        for name in intervals.keys.sorted() where name != ownShortName {
            guard let d = intervals[name], d.count > 1 else { continue }
            out += "\(HeraldLogFormat.csv(name)),\(d.count),\(d.mean),\(d.standardDeviation),\(d.min),\(d.max)\n"
        }
        return out
    }

    /// Count, mean, variance, min and max in one pass (Welford).
    struct Distribution: Sendable {
        var count = 0
        var mean = 0.0
        var m2 = 0.0
        var min = Double.infinity
        var max = -Double.infinity

        mutating func add(_ x: Double) {
            count += 1
            let delta = x - mean
            mean += delta / Double(count)
            m2 += delta * (x - mean)
            min = Swift.min(min, x)
            max = Swift.max(max, x)
        }

        var standardDeviation: Double { count > 1 ? (m2 / Double(count - 1)).squareRoot() : 0 }
    }
}
