/// What one injected fault (``Fault``) did to the node, for the multi-day report.
public struct FaultOutcome: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        case controllerLost = "controller_lost"
        case clockStep = "clock_step"
        case powerCut = "power_cut"
        case unsynchronisedStart = "unsynchronised_start"
    }

    public var kind: Kind
    /// Virtual seconds from the first midnight: when it began, and when the node was over it (the
    /// controller's session up again, the diary past the clock's return, the node started again,
    /// its clock synchronised).
    public var at: Double
    public var over: Double?
    /// How long the fault itself lasted (the controller away, the clock wrong, the power off).
    public var seconds: Double
    /// Visits open in the diary when it began (present phones, pending ones included).
    public var openVisits: Int
    /// Controller: attempts to reopen it (`BluetoothHost`'s backoff), the last one successful.
    public var reopenAttempts: Int?
    /// Clock: the wall clock's step (forwards, then back); unsynchronised start: how slow it was.
    public var clockSeconds: Double?
    /// Restarts: open visits the diary resumed and those it closed at their last sighting.
    public var resumedVisits: Int?
    public var closedVisits: Int?
    /// The node's own log lines about it (the diary's opening, its clock).
    public var log: [String] = []

    enum CodingKeys: String, CodingKey {
        case kind, at, over, seconds, log
        case openVisits = "open_visits", reopenAttempts = "reopen_attempts", clockSeconds = "clock_seconds"
        case resumedVisits = "resumed_visits", closedVisits = "closed_visits"
    }

    public init(kind: Kind, at: Double, seconds: Double, openVisits: Int) {
        self.kind = kind
        self.at = at
        self.seconds = seconds
        self.openVisits = openVisits
    }

    /// What happened, in a line ("day 3 10:42:05 controller lost for 20 s: …").
    public var summary: String {
        let when = Self.time(at)
        let back = over.map { " at \(Self.time($0, withDay: false))" } ?? " (not over when the day was judged)"
        var text: String
        switch kind {
        case .controllerLost:
            text = "\(when) controller lost for \(Self.duration(seconds)), \(openVisits) visits open: "
                + "session ended, reopened\(back) after \(reopenAttempts ?? 0) attempts"
        case .clockStep:
            let step = clockSeconds ?? 0
            text = "\(when) wall clock stepped \(step >= 0 ? "+" : "-")\(Self.duration(abs(step))) for \(Self.duration(seconds)), "
                + "\(openVisits) visits open"
        case .powerCut:
            text = "\(when) power cut for \(Self.duration(seconds)), \(openVisits) visits open: restarted from the diary\(back), "
                + "\(resumedVisits ?? 0) open visits resumed, \(closedVisits ?? 0) closed at their last sighting"
        case .unsynchronisedStart:
            text = "\(when) power cut at night for \(Self.duration(seconds)): started with the clock "
                + "\(Self.duration(clockSeconds ?? 0)) slow and unsynchronised, synchronised\(back)"
        }
        if !log.isEmpty { text += "; the node logged: " + log.joined(separator: "; ") }
        return text
    }

    /// "day 3 10:42:05" (virtual seconds from the first midnight; the venue's time is UTC).
    static func time(_ t: Double, withDay: Bool = true) -> String {
        let seconds = Int(t.rounded(.down))
        let day = seconds / 86_400 + 1
        let s = seconds % 86_400
        let clock = String(format: "%02d:%02d:%02d", s / 3600, s % 3600 / 60, s % 60)
        return withDay ? "day \(day) \(clock)" : clock
    }

    /// "20 s", "2 min 5 s", "1 h 30 min".
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return total % 60 == 0 ? "\(total / 60) min" : "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }
}
