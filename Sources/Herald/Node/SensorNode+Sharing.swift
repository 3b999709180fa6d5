/// Payload sharing, as a Herald Android node does it: iPhones in the background cannot see each
/// other, so the node writes the payloads of the other iPhones it saw recently to each iPhone it
/// connects to (signal write `0x03`).
extension SensorNode {
    /// Whether a share to this target is due: it is a confirmed iPhone whose payload the node
    /// knows, it was not shared with in the sharing interval, and there is something to share.
    /// Asked for every iPhone on every tick, so it only looks for one payload to share.
    func sharingDue(_ record: TargetRecord, now: Double) -> Bool {
        Self.sharingDue(record, now: now, configuration: configuration, recentIPhonePayloads: recentIPhonePayloads)
    }

    static func sharingDue(
        _ record: borrowing TargetRecord, now: Double, configuration: NodeConfiguration, recentIPhonePayloads: [TargetID: RecentPayload]
    ) -> Bool {
        guard configuration.payloadSharing, record.isIPhone, let own = record.payload?.bytes, !own.isEmpty else { return false }
        if let last = record.lastSharedAt, now - last < configuration.payloadSharingInterval { return false }
        return recentIPhonePayloads.values.contains { shareable($0, now: now, own: own, expiry: configuration.payloadSharingExpiry) }
    }

    /// A recent iPhone payload that can go to a phone whose own payload is `own`.
    private static func shareable(_ recent: RecentPayload, now: Double, own: [UInt8], expiry: Double) -> Bool {
        now - recent.seen <= expiry && recent.bytes.count == own.count && recent.bytes != own
    }

    /// The concatenated payloads to share with a target: other iPhones seen within the sharing
    /// expiry, of exactly the target's own payload length (it splits by that length, see
    /// ``SharedPayloads``), as many as fit in one write; a different window each time when not
    /// all fit. Nil when there is nothing to share.
    func sharingData(for record: TargetRecord, now: Double) -> [UInt8]? {
        guard configuration.payloadSharing, let own = record.payload?.bytes, !own.isEmpty else { return nil }
        var recent = recentIPhonePayloads.values.filter { Self.shareable($0, now: now, own: own, expiry: configuration.payloadSharingExpiry) }
        guard !recent.isEmpty else { return nil }
        // A stable order, so that rounds walk through all of them (by fingerprint, then bytes);
        // two targets can carry one payload (a phone seen again at a new address): share it once.
        recent.sort { $0.order != $1.order ? $0.order < $1.order : Self.precedes($0.bytes, $1.bytes) }
        var candidates: [[UInt8]] = []
        candidates.reserveCapacity(recent.count)
        for payload in recent where candidates.last != payload.bytes { candidates.append(payload.bytes) }
        let perWrite = max(1, SharedPayloads.maximumConcatenatedBytes / own.count)
        var chosen = candidates
        if candidates.count > perWrite {
            let start = (record.shareRound * perWrite) % candidates.count
            chosen = (0..<perWrite).map { candidates[(start + $0) % candidates.count] }
        }
        let data = SharedPayloads.concatenate(chosen, length: own.count)
        return data.isEmpty ? nil : data
    }

    /// Byte-wise order of two payloads, shorter first on a common prefix (as
    /// `lexicographicallyPrecedes`, without its generic iterators: this sort runs at every
    /// connection that shares).
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
                for k in 0..<min(x.count, y.count) where x[k] != y[k] { return x[k] < y[k] }
                return x.count < y.count
            }
        }
    }
}
