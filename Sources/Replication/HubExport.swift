import VenueDiary

/// A venue hub's share export: every node's visits merged into visits to the venue as a whole
/// (``VenueMerge``), in the node export's formats with rooms and segments added
/// (``DiaryExport/export(_:venueVisits:window:venue:generatedAt:nodeKey:to:)``).
public enum HubExport {
    /// Writes the venue-wide visits overlapping `window` to `sink`. Returns what it exported.
    /// `abandonedAfter`: a visit still open but unseen this long is shown closed at its last
    /// sighting (a node that died never closes its open visits).
    ///
    /// A merged visit can overlap the window while none of its segments does, or reach beyond
    /// the window through segments outside it, so the segments are read from the window widened
    /// by `checkOutSeconds` on each side, widened again while a merged visit that overlaps the
    /// window comes within `checkOutSeconds` of what was read, and merged; visits that do not
    /// overlap the window are left out. The segments read are held in memory.
    @discardableResult
    public static func export(
        _ format: DiaryExport.Format, from store: HubStore, window: VisitWindow, venue: VenueIdentity,
        checkOutSeconds: Int, generatedAt: Double, nodeKey: String? = nil, abandonedAfter: Double? = nil,
        to sink: ([UInt8]) throws -> Void
    ) throws -> DiaryExport.Summary {
        let visits = try venueVisits(from: store, window: window, checkOutSeconds: checkOutSeconds)
        return try DiaryExport.export(
            format, venueVisits: visits, window: window, venue: venue, generatedAt: generatedAt, nodeKey: nodeKey,
            abandonedAfter: abandonedAfter, to: sink)
    }

    /// The merged visits overlapping `window`, by check-in then id.
    public static func venueVisits(from store: HubStore, window: VisitWindow, checkOutSeconds: Int) throws -> [VenueVisit] {
        let reach = Double(max(0, checkOutSeconds))
        var read = VisitWindow(from: window.from.map { $0 - reach }, to: window.to.map { $0 + reach })
        while true {
            let merged = VenueMerge.merge(try store.segments(in: read), checkOutSeconds: checkOutSeconds)
            let inside = merged.filter { overlaps($0.visit, window) }
            var wider = read
            for venueVisit in inside {
                if let from = wider.from, venueVisit.visit.checkIn - reach < from { wider.from = venueVisit.visit.checkIn - reach }
                // An open visit ends, for merging, at its last sighting.
                let end = venueVisit.visit.checkOut ?? venueVisit.visit.lastSeen
                if let to = wider.to, end + reach > to { wider.to = end + reach }
            }
            if wider == read { return inside }
            read = wider
        }
    }

    static func overlaps(_ visit: Visit, _ window: VisitWindow) -> Bool {
        if let to = window.to, visit.checkIn > to { return false }
        if let from = window.from, let checkOut = visit.checkOut, checkOut < from { return false }
        return true
    }
}
