/// What the diary knows about the wall clock its times come from.
///
/// The Pi has no real-time clock: until the system clock is synchronised, wall time is whatever
/// was saved at the last shutdown (or power cut), running at the right rate from a wrong start.
/// So `wall − CLOCK_BOOTTIME` is constant until synchronisation steps the wall clock, and one
/// reading of it before and one after give the step. Visits recorded before are stored with
/// their boot and that offset; when the clock synchronises in the same boot (this process or a
/// later one), ``VenueDiary/synchronise(wallMinusBoot:)`` adds the step to their times. Visits
/// of a boot that never synchronised keep their marks: their times cannot be corrected, and
/// exports say so.
public enum DiaryClock: Sendable, Equatable {
    /// Wall times are right (the system clock is synchronised, or time is simulated or replayed).
    case synchronised
    /// Wall times come from a clock not yet synchronised in boot `bootID`, whose
    /// `wall − CLOCK_BOOTTIME` is `wallMinusBoot` seconds.
    case unsynchronised(bootID: String, wallMinusBoot: Double)
}

/// What a clock synchronisation did to the diary.
public struct ClockCorrection: Sendable, Equatable {
    /// Seconds added to times recorded before synchronisation (the step of the wall clock).
    public var step: Double
    /// Stored visits of this boot whose times were corrected.
    public var correctedVisits: Int
    /// Stored visits of other boots that never synchronised: their times stay uncorrected.
    public var uncorrectableVisits: Int

    public init(step: Double, correctedVisits: Int, uncorrectableVisits: Int) {
        self.step = step
        self.correctedVisits = correctedVisits
        self.uncorrectableVisits = uncorrectableVisits
    }
}
