import Sightings

/// The per-identity state machine: a sighting opens, extends, checks in or reopens a visit; a
/// visit unseen for longer than the check-out limit (or at the maximum length) ends.
extension PresenceTracker {
    func liveSlot(_ key: VisitKey) -> Int? {
        let i = Int(key.slot)
        guard i < slots.count, slots[i].generation == key.generation, slots[i].phase != .free else { return nil }
        return i
    }

    func key(of i: Int) -> VisitKey {
        VisitKey(slot: UInt32(i), generation: slots[i].generation)
    }

    func visit(of i: Int, _ s: Slot, checkOut: Double?) -> Visit {
        Visit(
            kind: s.kind, payload: payloads[i], checkIn: s.first, lastSeen: s.last, checkOut: checkOut,
            samples: s.samples, rssiMax: s.rssiMax, rssiSum: s.rssiSum, metadata: metadata[i], sharedIdentity: s.shared)
    }

    mutating func observe(_ i: Int, time: Double, rssi: Int?) {
        var s = slots[i]
        switch s.phase {
        case .pending, .checkedIn:
            if time - s.unseenSince > checkOut {
                end(i, &s, idleSince: time)
                forgetCarriers(i)
                open(&s, time: time, rssi: rssi)
            } else if time >= s.last {
                s.last = time
                fold(&s, rssi: rssi)
            } else if !foldEarlier(&s, time: time, rssi: rssi) {
                counters.droppedSamples += 1
            }
        case .idle, .free:
            forgetCarriers(i)
            open(&s, time: time, rssi: rssi)
            lookSooner(i, s)
        }
        grew(i, &s)
        slots[i] = s
    }

    mutating func open(_ s: inout Slot, time: Double, rssi: Int?) {
        s.phase = .pending
        s.dirty = false
        s.shared = false
        s.carrier = 0
        s.first = time
        s.last = time
        s.resumedAt = -.infinity
        s.seen = 0
        s.samples = 0
        s.rssiMax = 0
        s.rssiSum = 0
        fold(&s, rssi: rssi)
        openVisitCount += 1
    }

    /// Counts a sighting; only a measured one joins the RSSI statistics.
    mutating func fold(_ s: inout Slot, rssi: Int?) {
        counters.sightings += 1
        s.seen &+= s.seen == .max ? 0 : 1
        guard let rssi else { return }
        if s.samples == 0 || rssi > s.rssiMax { s.rssiMax = rssi }
        s.samples += 1
        s.rssiSum += rssi
    }

    /// Folds a sample older than the visit's last sighting; false when it fits the visit not.
    mutating func foldEarlier(_ s: inout Slot, time: Double, rssi: Int?) -> Bool {
        if time >= s.first {
            fold(&s, rssi: rssi)
            return true
        }
        guard s.first - time <= checkOut, time > s.endedAt, s.last - time < maxVisit else { return false }
        s.first = time
        fold(&s, rssi: rssi)
        return true
    }

    /// After a visit gained samples: check in, mark for the next update report, or close at the
    /// maximum visit length.
    mutating func grew(_ i: Int, _ s: inout Slot) {
        switch s.phase {
        case .pending where s.last - s.first > checkIn:
            s.phase = .checkedIn
            s.dirty = false
            changes.append(VisitChange(event: .checkedIn, key: key(of: i), visit: visit(of: i, s, checkOut: nil)))
        case .checkedIn where !s.dirty:
            s.dirty = true
            dirtySlots.append(UInt32(i))
        default:
            break
        }
        if s.phase != .idle, s.last - s.first >= maxVisit {
            end(i, &s, idleSince: s.last)
        }
    }

    mutating func end(_ i: Int, _ s: inout Slot, idleSince: Double) {
        let event: VisitChange.Event = s.phase == .checkedIn ? .checkedOut : .walkPast
        changes.append(VisitChange(event: event, key: key(of: i), visit: visit(of: i, s, checkOut: s.last)))
        s.endedCheckedIn = s.phase == .checkedIn
        s.phase = .idle
        s.dirty = false
        s.priorEnd = s.endedAt
        s.endedAt = s.last
        s.idleSince = idleSince
        lookSooner(i, s)
        openVisitCount -= 1
    }

    /// Takes back the end of the identity's last visit (its statistics are still in the slot).
    mutating func reopen(_ i: Int, _ s: inout Slot) {
        s.phase = s.endedCheckedIn ? .checkedIn : .pending
        s.dirty = false
        s.endedAt = s.priorEnd
        s.idleSince = .nan
        lookSooner(i, s)
        openVisitCount += 1
        if s.phase == .checkedIn {
            changes.append(VisitChange(event: .reopened, key: key(of: i), visit: visit(of: i, s, checkOut: nil)))
        }
    }

    func lifetime(_ kind: PayloadKind) -> Double {
        switch kind {
        case .gaen, .advert: min(keyLifetime, checkOut)
        case .herald, .opentrace: keyLifetime
        }
    }
}
