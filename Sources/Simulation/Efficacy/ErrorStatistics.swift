/// Median, 95th percentile and maximum of absolute errors, with the mean of the signed errors
/// (negative: the diary is early). Nil fields when there are no samples.
public struct ErrorStatistics: Sendable, Equatable, Codable {
    public var count: Int
    public var median: Double?
    public var p95: Double?
    public var max: Double?
    public var meanSigned: Double?

    enum CodingKeys: String, CodingKey {
        case count, median, p95, max
        case meanSigned = "mean_signed"
    }

    public init(count: Int, median: Double?, p95: Double?, max: Double?, meanSigned: Double?) {
        self.count = count
        self.median = median
        self.p95 = p95
        self.max = max
        self.meanSigned = meanSigned
    }

    /// From signed errors (diary minus truth, seconds).
    public init(signedErrors errors: [Double]) {
        let absolute = errors.map(abs).sorted()
        count = errors.count
        median = Self.percentile(50, ofSorted: absolute)
        p95 = Self.percentile(95, ofSorted: absolute)
        max = absolute.last
        meanSigned = errors.isEmpty ? nil : errors.reduce(0, +) / Double(errors.count)
    }

    /// The `p`-th percentile of sorted values by linear interpolation between closest ranks (the
    /// usual definition: the median of an even count is the mean of the middle two); nil if empty.
    public static func percentile(_ p: Double, ofSorted values: [Double]) -> Double? {
        guard let first = values.first else { return nil }
        guard values.count > 1 else { return first }
        let position = p / 100 * Double(values.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = Swift.min(lower + 1, values.count - 1)
        let fraction = position - Double(lower)
        return values[lower] + (values[upper] - values[lower]) * fraction
    }
}
