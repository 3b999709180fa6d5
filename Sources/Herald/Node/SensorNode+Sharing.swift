/// Payload sharing, as a Herald Android node does it: iPhones in the background cannot see each
/// other, so the node writes the payloads of the other iPhones it saw recently to each iPhone it
/// connects to (signal write `0x03`).
extension SensorNode {
    /// Whether a share to this target is due: it is a confirmed iPhone whose payload the node
    /// knows, it was not shared with in the sharing interval, and there is something to share.
    func sharingDue(_ record: TargetRecord, now: Double) -> Bool {
        guard configuration.payloadSharing, record.isIPhone, record.payload != nil else { return false }
        if let last = record.lastSharedAt, now - last < configuration.payloadSharingInterval { return false }
        return sharingData(for: record, now: now) != nil
    }

    /// The concatenated payloads to share with a target: other iPhones seen within the sharing
    /// expiry, of exactly the target's own payload length (it splits by that length, see
    /// ``SharedPayloads``), as many as fit in one write; a different window each time when not
    /// all fit. Nil when there is nothing to share.
    func sharingData(for record: TargetRecord, now: Double) -> [UInt8]? {
        guard configuration.payloadSharing, let own = record.payload?.bytes, !own.isEmpty else { return nil }
        var candidates = [[UInt8]]()
        for (payload, seen) in recentIPhonePayloads
        where now - seen <= configuration.payloadSharingExpiry && payload.count == own.count && payload != own {
            candidates.append(payload)
        }
        guard !candidates.isEmpty else { return nil }
        // A stable order, so that rounds walk through all of them.
        candidates.sort { $0.lexicographicallyPrecedes($1) }
        let perWrite = max(1, SharedPayloads.maximumConcatenatedBytes / own.count)
        var chosen = candidates
        if candidates.count > perWrite {
            let start = (record.shareRound * perWrite) % candidates.count
            chosen = (0..<perWrite).map { candidates[(start + $0) % candidates.count] }
        }
        let data = SharedPayloads.concatenate(chosen, length: own.count)
        return data.isEmpty ? nil : data
    }
}
