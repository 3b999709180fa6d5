import VenueDiary

/// The matches of keys met one at a time, across files, without holding the keys. Each key counts
/// once: a key met again (the same 16 bytes) replaces the earlier only when it comes from
/// `revised_keys` (and may then stop or start matching). The matches come in the order their keys
/// were first met.
///
/// Held: each distinct key's 16 bytes and place (an `[RPI: UInt32]` entry: 20 bytes a slot of the
/// hash table, which is kept at most 3/4 full and doubles as it grows, so 27–53 bytes a key, and
/// both tables for a moment while it doubles), and the matches.
public struct StreamingKeyMatches {
    private var place: [RPI: UInt32] = [:]
    private var matches: [UInt32: KeyMatch] = [:]
    public let matcher: ExposureMatcher

    public init(matcher: ExposureMatcher) { self.matcher = matcher }

    /// The distinct keys met.
    public var keyCount: Int { place.count }

    public mutating func add(_ key: DiagnosisKey, revised: Bool) {
        let id = RPI(key.keyData)!
        if let at = place[id] {
            guard revised else { return }
            matches[at] = matcher.match(key)
        } else {
            let at = UInt32(place.count)
            place[id] = at
            if let match = matcher.match(key) { matches[at] = match }
        }
    }

    /// The matches in the order of their keys.
    public var result: [KeyMatch] { matches.sorted { $0.key < $1.key }.map(\.value) }
}

/// One diagnosis key whose identifiers the diary heard, with the visits that heard them.
public struct KeyMatch: Sendable {
    public var key: DiagnosisKey
    /// Matched visits with the interval whose identifier each carries, in diary order.
    public var visits: [(visit: Visit, interval: UInt32)]
}

/// Finds the diary's `gaen` visits whose identifier one of the keys derives.
///
/// The diary's identifiers go into a hash set once; each key's 1–144 identifiers are derived one
/// at a time and looked up, so no table of all derived identifiers is ever held.
public struct ExposureMatcher {
    /// The specification's tolerance: an identifier matches when heard within ±2 hours of the
    /// interval it belongs to.
    public static let toleranceSeconds = 2.0 * 3600

    private var byRPI: [RPI: [Int]] = [:]
    public let visits: [Visit]
    private let earliest: Double
    private let latest: Double

    public init(visits: [Visit]) {
        self.visits = visits
        var earliest = Double.infinity
        var latest = -Double.infinity
        for (i, visit) in visits.enumerated() where visit.kind == .gaen {
            guard let rpi = RPI(visit.payload) else { continue }
            byRPI[rpi, default: []].append(i)
            earliest = min(earliest, visit.checkIn)
            latest = max(latest, visit.checkOut ?? visit.lastSeen)
        }
        self.earliest = earliest
        self.latest = latest
    }

    /// The number of distinct identifiers the diary holds.
    public var identifierCount: Int { byRPI.count }

    /// Whether a visit heard from `start` to `end` lies within the tolerance of `interval`.
    public static func within(start: Double, end: Double, interval: UInt32) -> Bool {
        let from = Double(interval) * Double(GAENCrypto.intervalSeconds) - toleranceSeconds
        let to = Double(interval + 1) * Double(GAENCrypto.intervalSeconds) + toleranceSeconds
        return start <= to && end >= from
    }

    /// The visits one key matches (nil when none).
    public func match(_ key: DiagnosisKey) -> KeyMatch? {
        guard !byRPI.isEmpty else { return nil }
        let first = key.rollingStartIntervalNumber
        let period = UInt32(key.rollingPeriod)
        // A key whose whole validity, with the tolerance, misses the diary's time span cannot match.
        let from = Double(first) * Double(GAENCrypto.intervalSeconds) - Self.toleranceSeconds
        let to = Double(first + period) * Double(GAENCrypto.intervalSeconds) + Self.toleranceSeconds
        guard earliest <= to, latest >= from else { return nil }
        var deriver = IdentifierDeriver(rpik: GAENCrypto.rollingProximityIdentifierKey(key.keyData))
        var found: [(visit: Visit, interval: UInt32)] = []
        for interval in first..<(first + period) {
            let rpi = deriver.identifier(interval: interval)
            guard let indices = byRPI[rpi] else { continue }
            for i in indices {
                let visit = visits[i]
                if Self.within(start: visit.checkIn, end: visit.checkOut ?? visit.lastSeen, interval: interval) {
                    found.append((visit, interval))
                }
            }
        }
        return found.isEmpty ? nil : KeyMatch(key: key, visits: found.sorted { ($0.visit.checkIn, $0.visit.id ?? 0) < ($1.visit.checkIn, $1.visit.id ?? 0) })
    }

    public func match(_ keys: [DiagnosisKey]) -> [KeyMatch] {
        keys.compactMap(match)
    }
}
