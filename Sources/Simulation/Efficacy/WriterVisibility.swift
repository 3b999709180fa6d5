/// What a phone that cannot advertise lets a node know of its stay.
///
/// Such a phone (Herald for Android without advertising) only connects and writes: its payload
/// every 5 minutes, an RSSI in between, each from its current address, which rotates every
/// 10-20 minutes. A node can tie a write to the phone only through the address the payload came
/// from: the RSSI writes of an address epoch in which the phone wrote its payload (before or
/// after them: the node keeps them for attribution) belong to its identity; those of an epoch
/// that ended before its next payload write are anonymous to any node. A stay whose
/// identified part (the first to the last moment of such epochs within it) is no longer than
/// the check-in limit cannot become a visit however well the node works: it is **hidden**, and
/// judging does not hold it against recall (``VisitMatching``).
///
/// Seen in a month's run (issue 27, day 5): a regular's writer present 16:56-17:00, its payload
/// written 3 s after arriving, its address rotating 113 s later, its next payload write due
/// after closing: 107 s identified, then 124 s of RSSI writes from an address no node could
/// name.
public enum WriterVisibility {
    /// The span of `[arrive, leave]` in which a node can know the phone, in seconds (0 when
    /// none): from the earliest to the latest moment inside the stay of an address epoch in
    /// which the phone wrote its payload. `payloadWrites` are the phone's accepted payload
    /// writes (virtual seconds, in order).
    public static func identifiedSpan(
        arrive: Double, leave: Double, rotation: AddressRotation, payloadWrites: [Double]
    ) -> Double {
        var first = Double.infinity
        var last = -Double.infinity
        for write in payloadWrites {
            let epoch = rotation.epoch(at: write)
            let start = max(arrive, rotation.start(ofEpoch: epoch))
            let end = min(leave, rotation.end(ofEpoch: epoch))
            guard start <= end else { continue }  // an epoch that does not reach into the stay
            first = min(first, start)
            last = max(last, end)
        }
        return last > first ? last - first : 0
    }

    /// Whether a stay longer than `checkIn` is hidden: no node can record it as a visit, as the
    /// phone made itself known for no longer than `checkIn` of it.
    public static func isHidden(
        arrive: Double, leave: Double, rotation: AddressRotation, payloadWrites: [Double], checkIn: Double
    ) -> Bool {
        identifiedSpan(arrive: arrive, leave: leave, rotation: rotation, payloadWrites: payloadWrites) <= checkIn
    }
}
