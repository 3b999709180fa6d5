/// What an LED does over time, from the moment the pattern started.
public enum LEDPattern: Sendable, Equatable {
    case off
    case on
    /// On for `on`, off for `off`, repeating; starts on, so a change is visible at once.
    case blink(on: Duration, off: Duration)
    /// `count` flashes of `on`, `off` apart, then dark for `pause`, repeating: a code an operator
    /// can count (as the Pi's own activity LED counts its boot errors). Starts on.
    case flashes(count: Int, on: Duration, off: Duration, pause: Duration)

    /// Whether the LED is lit `elapsed` after the pattern started.
    public func level(_ elapsed: Duration) -> Bool {
        switch self {
        case .off: return false
        case .on: return true
        case .blink(let on, let off):
            return Self.phase(elapsed, period: on + off) < Self.nanoseconds(on)
        case .flashes(let count, let on, let off, let pause):
            let phase = Self.phase(elapsed, period: Self.period(count: count, on: on, off: off, pause: pause))
            let flash = phase / max(Self.nanoseconds(on + off), 1)
            return flash < max(count, 1) && phase - flash * Self.nanoseconds(on + off) < Self.nanoseconds(on)
        }
    }

    /// One cycle of ``flashes(count:on:off:pause:)``: the flashes, the gaps between them, the pause.
    static func period(count: Int, on: Duration, off: Duration, pause: Duration) -> Duration {
        let count = max(count, 1)
        return on * count + off * (count - 1) + pause
    }

    /// The first elapsed time after `elapsed` at which the level changes; nil if it never does.
    public func nextChange(after elapsed: Duration) -> Duration? {
        if case .flashes(let count, let on, let off, let pause) = self {
            let period = Self.nanoseconds(Self.period(count: count, on: on, off: off, pause: pause))
            let phase = Self.phase(elapsed, period: .nanoseconds(period))
            let start = Self.nanoseconds(elapsed) - phase
            // The edges of one cycle: each flash's start and end, then the next cycle's start.
            var edges: [Int64] = []
            for flash in 0..<Int64(max(count, 1)) {
                let begin = flash * Self.nanoseconds(on + off)
                edges += [begin, begin + Self.nanoseconds(on)]
            }
            edges.append(period)
            return .nanoseconds(start + (edges.first { $0 > phase } ?? period))
        }
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
