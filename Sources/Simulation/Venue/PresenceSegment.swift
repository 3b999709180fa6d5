/// A stretch of time a device is in range, with its distance to the node along the way.
public struct PresenceSegment: Sendable, Equatable {
    /// Virtual seconds.
    public var start: Double
    public var end: Double
    /// Distance to the node over the segment (metres).
    public var path: DistancePath

    public init(start: Double, end: Double, path: DistancePath) {
        self.start = start
        self.end = end
        self.path = path
    }

    public var duration: Double { end - start }

    public func contains(_ time: Double) -> Bool { time >= start && time < end }
}

/// Distance to the node over time: straight lines between waypoints, constant before the first
/// and after the last.
public struct DistancePath: Sendable, Equatable {
    public struct Waypoint: Sendable, Equatable {
        public var time: Double
        public var metres: Double

        public init(time: Double, metres: Double) {
            self.time = time
            self.metres = metres
        }
    }

    /// In time order.
    public var waypoints: [Waypoint]

    public init(_ waypoints: [Waypoint]) {
        self.waypoints = waypoints.sorted { $0.time < $1.time }
    }

    /// A device that does not move.
    public static func fixed(_ metres: Double) -> DistancePath {
        DistancePath([Waypoint(time: 0, metres: metres)])
    }

    public func distance(at time: Double) -> Double {
        guard let first = waypoints.first, let last = waypoints.last else { return 0 }
        if time <= first.time { return first.metres }
        if time >= last.time { return last.metres }
        // Binary search for the leg that holds `time`.
        var low = 0
        var high = waypoints.count - 1
        while high - low > 1 {
            let mid = (low + high) / 2
            if waypoints[mid].time <= time { low = mid } else { high = mid }
        }
        let a = waypoints[low]
        let b = waypoints[high]
        let span = b.time - a.time
        guard span > 0 else { return b.metres }
        return a.metres + (b.metres - a.metres) * (time - a.time) / span
    }
}
