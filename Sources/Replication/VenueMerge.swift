import Sightings
import VenueDiary

/// Merges the rooms' visits of one identity into visits to the venue as a whole.
///
/// A phone walking from the hall into room 2 is seen by two nodes: two segments of the same
/// identity (kind, payload). Segments of one identity are merged when they overlap or when the
/// gap from one's end (its check-out, or its last sighting while open) to the next one's
/// check-in is at most `checkOutSeconds`, the same rule a node applies to sightings: at exactly
/// `checkOutSeconds` they merge, past it they are separate visits. Different identities are
/// never linked.
///
/// A merged visit: check-in the earliest, check-out the latest (open when the segment that ends
/// latest is still open), last sighting the latest, samples and RSSI sums added (so the mean is
/// weighted by samples), strongest RSSI over the segments with samples, `clock_uncorrected` (and `shared_identifier`) if
/// any segment is, metadata from the first segment that has it, its id the hub id of its
/// earliest segment; rooms are the distinct node names in order of first sighting, and each
/// segment is kept. Visits come by check-in, then id.
///
/// The merge does not cap a visit's length: a node closes a visit at `max_visit_hours` and opens
/// the next at once, and those two segments are merged here.
public enum VenueMerge {
    struct Identity: Hashable {
        var kind: PayloadKind
        var payload: [UInt8]
    }

    /// Merges `segments` (in any order) into venue-wide visits, by check-in then id.
    public static func merge(_ segments: [HubSegment], checkOutSeconds: Int) -> [VenueVisit] {
        var groups: [Identity: [HubSegment]] = [:]
        for segment in segments {
            groups[Identity(kind: segment.visit.kind, payload: segment.visit.payload), default: []].append(segment)
        }
        let threshold = Double(checkOutSeconds)
        var merged: [VenueVisit] = []
        for var group in groups.values {
            group.sort { ($0.visit.checkIn, $0.id) < ($1.visit.checkIn, $1.id) }
            var start = 0
            var end = -Double.infinity
            for (index, segment) in group.enumerated() {
                if index > start && segment.visit.checkIn - end > threshold {
                    merged.append(visit(of: group[start..<index]))
                    start = index
                    end = -.infinity
                }
                end = max(end, segment.visit.checkOut ?? segment.visit.lastSeen)
            }
            if !group.isEmpty { merged.append(visit(of: group[start...])) }
        }
        merged.sort { ($0.visit.checkIn, $0.visit.id ?? 0) < ($1.visit.checkIn, $1.visit.id ?? 0) }
        return merged
    }

    /// One venue-wide visit of `cluster`: segments of one identity by check-in then id.
    static func visit(of cluster: ArraySlice<HubSegment>) -> VenueVisit {
        let first = cluster[cluster.startIndex]
        var visit = first.visit
        visit.id = first.id
        visit.metadata = nil
        visit.samples = 0
        visit.rssiMax = 0
        visit.rssiSum = 0
        visit.clockUncorrected = false
        visit.sharedIdentity = false
        var end = -Double.infinity
        var open = false
        var rooms: [String] = []
        var segments: [RoomSegment] = []
        segments.reserveCapacity(cluster.count)
        for segment in cluster {
            let part = segment.visit
            let partEnd = part.checkOut ?? part.lastSeen
            if partEnd > end {
                end = partEnd
                open = part.checkOut == nil
            } else if partEnd == end && part.checkOut == nil {
                open = true
            }
            visit.lastSeen = max(visit.lastSeen, part.lastSeen)
            if part.samples > 0 {
                visit.rssiMax = visit.samples > 0 ? max(visit.rssiMax, part.rssiMax) : part.rssiMax
                visit.samples += part.samples
                visit.rssiSum += part.rssiSum
            }
            if part.clockUncorrected { visit.clockUncorrected = true }
            if part.sharedIdentity { visit.sharedIdentity = true }
            if visit.metadata == nil { visit.metadata = part.metadata }
            if !rooms.contains(segment.node) { rooms.append(segment.node) }
            segments.append(RoomSegment(
                room: segment.node, checkIn: part.checkIn, checkOut: part.checkOut, lastSeen: part.lastSeen,
                samples: part.samples, rssiMax: part.rssiMax, rssiSum: part.rssiSum))
        }
        visit.checkOut = open ? nil : end
        return VenueVisit(visit: visit, rooms: rooms, segments: segments)
    }
}
