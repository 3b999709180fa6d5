/// What an LED does over time, from the moment the pattern started.
public enum LEDPattern: Sendable, Equatable {
    case off
    case on
    /// On for `on`, off for `off`, repeating; starts on, so a change is visible at once.
    case blink(on: Duration, off: Duration)

    /// Whether the LED is lit `elapsed` after the pattern started.
    public func level(_ elapsed: Duration) -> Bool {
        switch self {
        case .off: return false
        case .on: return true
        case .blink(let on, let off):
            return Self.phase(elapsed, period: on + off) < Self.nanoseconds(on)
        }
    }

    /// The first elapsed time after `elapsed` at which the level changes; nil if it never does.
    public func nextChange(after elapsed: Duration) -> Duration? {
        guard case .blink(let on, let off) = self else { return nil }
        let phase = Self.phase(elapsed, period: on + off)
        let start = Self.nanoseconds(elapsed) - phase
        let next = phase < Self.nanoseconds(on) ? start + Self.nanoseconds(on) : start + Self.nanoseconds(on + off)
        return .nanoseconds(next)
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    private static func phase(_ elapsed: Duration, period: Duration) -> Int64 {
        let p = max(nanoseconds(period), 1)
        let e = nanoseconds(elapsed)
        return ((e % p) + p) % p
    }
}
