import Sightings
import Testing
@testable import VenueDiary

/// The presence state machine on a manual clock: every time is given by the test.
@Suite struct PresenceTrackerTests {
    var tracker = PresenceTracker(settings: settings())
    let phone = heraldPayload(1)

    /// Records sightings of one identity at the given times (RSSI -60 unless given).
    mutating func sight(_ key: VisitKey, _ times: [Double], rssi: Int = -60) {
        for time in times {
            let recorded = tracker.record(key, time: time, rssi: rssi)
            #expect(recorded)
        }
    }

    @Test mutating func exactlyTheCheckInLimitStaysPending() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 60, 120])
        #expect(!tracker.isCheckedIn(key))
        #expect(tracker.takeChanges(includingUpdates: true).isEmpty)
        #expect(tracker.openVisit(key)?.samples == 3)
    }

    @Test mutating func oneSecondPastTheCheckInLimitChecksIn() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 60, 120, 121])
        #expect(tracker.isCheckedIn(key))
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn])
        #expect(changes.first?.key == key)
        #expect(changes.first?.visit == Visit(kind: .herald, payload: phone, checkIn: 0, lastSeen: 121, samples: 4, rssiMax: -60, rssiSum: -240))
    }

    @Test mutating func aGapOfExactlyTheCheckOutLimitKeepsTheVisit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 100, 200, 500])
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn])
        #expect(tracker.openVisit(key)?.checkIn == 0)
        #expect(tracker.openVisit(key)?.lastSeen == 500)
        tracker.advance(to: 800)
        #expect(tracker.takeChanges(includingUpdates: false).isEmpty)
    }

    @Test mutating func aGapOneSecondLongerSplitsTheVisit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 100, 200, 500, 801])
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn, .checkedOut])
        let closed = changes[1].visit
        #expect(closed.checkIn == 0 && closed.lastSeen == 500 && closed.checkOut == 500 && closed.samples == 4)
        let reopened = tracker.openVisit(key)
        #expect(reopened?.checkIn == 801 && reopened?.samples == 1)
        #expect(!tracker.isCheckedIn(key))
    }

    @Test mutating func theClockClosesVisitsUnseenForLongerThanTheCheckOutLimit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 100, 200])
        _ = tracker.takeChanges(includingUpdates: false)
        tracker.advance(to: 500)
        #expect(tracker.takeChanges(includingUpdates: false).isEmpty)
        tracker.advance(to: 500.5)
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedOut])
        #expect(changes.first?.visit.checkOut == 200)
        #expect(tracker.openVisitCount == 0)
    }

    @Test mutating func aShortVisitIsAWalkPastAndNeverChecksIn() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 30, 60])
        tracker.advance(to: 361)
        let changes = tracker.takeChanges(includingUpdates: true)
        #expect(changes.map(\.event) == [.walkPast])
        #expect(changes.first?.visit.checkOut == 60)
    }

    @Test mutating func sightingsWeakerThanMinRSSIAreIgnoredEntirely() {
        tracker = PresenceTracker(settings: settings(minRSSI: -80))
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0], rssi: -80)
        sight(key, [100, 200], rssi: -81)
        #expect(tracker.openVisit(key)?.lastSeen == 0)
        #expect(tracker.counters.ignoredWeak == 2)
        tracker.advance(to: 301)
        #expect(tracker.takeChanges(includingUpdates: true).map(\.event) == [.walkPast])

        // A neighbour behind a wall, always weak, never opens a visit at all.
        let neighbour = tracker.key(for: .herald, payload: heraldPayload(2))
        sight(neighbour, Array(stride(from: 0.0, through: 3600, by: 10)), rssi: -95)
        #expect(tracker.openVisit(neighbour) == nil)
        tracker.record(Sighting(time: 10, kind: .gaen, payload: [1, 2], rssi: -99))
        #expect(tracker.trackedIdentities == 2)
    }

    @Test mutating func sightingsWithoutRSSIArePresenceButNotRSSIStatistics() {
        // btvirt reports no RSSI at all, and a phone writing to us gives none: presence counts,
        // min_rssi does not apply, and samples/strongest/mean cover measured sightings only.
        tracker = PresenceTracker(settings: settings(minRSSI: -80))
        let key = tracker.key(for: .herald, payload: phone)
        for time in [0.0, 60, 121] {
            let recorded = tracker.record(key, time: time, rssi: nil)
            #expect(recorded)
        }
        #expect(tracker.isCheckedIn(key))
        #expect(tracker.openVisit(key) == Visit(kind: .herald, payload: phone, checkIn: 0, lastSeen: 121, samples: 0, rssiMax: 0, rssiSum: 0))
        tracker.record(key, time: 130, rssi: -70)
        tracker.record(key, time: 140, rssi: nil)
        tracker.record(key, time: 150, rssi: -90)  // weaker than min_rssi: ignored
        tracker.record(key, time: 160, rssi: -74)
        #expect(tracker.openVisit(key) == Visit(kind: .herald, payload: phone, checkIn: 0, lastSeen: 160, samples: 2, rssiMax: -70, rssiSum: -144))
        // Late attribution takes unmeasured samples too, extending the visit backwards.
        tracker.attribute([RSSISample(time: -100, rssi: nil), RSSISample(time: -50, rssi: -72)], to: key)
        #expect(tracker.openVisit(key)?.checkIn == -100)
        #expect(tracker.openVisit(key)?.samples == 3)
        // A visit opened by an unmeasured sighting takes the first measured RSSI as its strongest.
        let other = tracker.key(for: .herald, payload: heraldPayload(2))
        tracker.record(other, time: 0, rssi: nil)
        tracker.record(other, time: 1, rssi: -75)
        #expect(tracker.openVisit(other)?.rssiMax == -75)
        #expect(tracker.counters.sightings == 8 + 2)
        #expect(tracker.counters.ignoredWeak == 1)
    }

    @Test mutating func aVisitReachingTheMaximumIsClosedThereAndTheNextSightingOpensANewOne() {
        tracker = PresenceTracker(settings: settings(maxVisit: 3600))
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, Array(stride(from: 0.0, through: 3590, by: 10)))
        #expect(tracker.openVisit(key)?.checkIn == 0)
        sight(key, [3600])
        var changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn, .checkedOut])
        #expect(changes[1].visit.checkIn == 0 && changes[1].visit.checkOut == 3600 && changes[1].visit.samples == 361)
        #expect(tracker.openVisit(key) == nil)

        sight(key, [3610, 3700, 3731])
        changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn])
        #expect(changes.first?.visit.checkIn == 3610)
    }

    @Test mutating func interleavedPhonesKeepTheirOwnVisits() {
        let stay = tracker.key(for: .herald, payload: phone)
        let passer = tracker.key(for: .herald, payload: heraldPayload(2))
        let gaen = tracker.key(for: .gaen, payload: Array(phone.prefix(16)))
        #expect(stay != passer && stay != gaen)
        for t in stride(from: 0.0, through: 600, by: 20) {
            tracker.record(stay, time: t, rssi: -55)
            if (100...160).contains(t) { tracker.record(passer, time: t + 1, rssi: -85) }
            if t >= 300 { tracker.record(gaen, time: t + 2, rssi: -70) }
        }
        tracker.advance(to: 1000)
        let changes = tracker.takeChanges(includingUpdates: false)
        let checkIns = changes.filter { $0.event == .checkedIn }
        #expect(Set(checkIns.map(\.key)) == [stay, gaen])
        #expect(changes.filter { $0.event == .walkPast }.map(\.key) == [passer])
        let stayVisit = changes.first { $0.event == .checkedOut && $0.key == stay }?.visit
        #expect(stayVisit?.checkIn == 0 && stayVisit?.checkOut == 600 && stayVisit?.samples == 31)
        let gaenVisit = changes.first { $0.event == .checkedOut && $0.key == gaen }?.visit
        #expect(gaenVisit?.kind == .gaen && gaenVisit?.checkIn == 302 && gaenVisit?.checkOut == 602)
        #expect(changes.first { $0.key == passer }?.visit.samples == 4)
    }

    @Test mutating func aVisitKeepsSampleCountStrongestAndMeanRSSI() {
        let key = tracker.key(for: .herald, payload: phone)
        tracker.record(key, time: 0, rssi: -70)
        tracker.record(key, time: 10, rssi: -52)
        tracker.record(key, time: 20, rssi: -64)
        let visit = tracker.openVisit(key)
        #expect(visit?.samples == 3 && visit?.rssiMax == -52 && visit?.rssiSum == -186)
        #expect(visit?.rssiMean == -62)
    }

    @Test mutating func updatesReportChangedCheckedInVisitsOncePerFlush() {
        let key = tracker.key(for: .herald, payload: phone)
        let pending = tracker.key(for: .herald, payload: heraldPayload(2))
        sight(key, [0, 121])
        sight(pending, [50])
        #expect(tracker.takeChanges(includingUpdates: true).map(\.event) == [.checkedIn])
        sight(key, [130, 140])
        sight(pending, [60])
        let changes = tracker.takeChanges(includingUpdates: true)
        #expect(changes.map(\.event) == [.updated])
        #expect(changes.first?.visit.lastSeen == 140 && changes.first?.visit.samples == 4)
        #expect(tracker.takeChanges(includingUpdates: true).isEmpty)
    }

    @Test mutating func lateSamplesExtendTheVisitBackwardsWithinTheCheckOutLimit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [1000, 1050], rssi: -70)
        // 750 is within 300 s of 900, which is within 300 s of 1000: both extend the visit. 400 is
        // more than 300 s before 750: dropped.
        tracker.attribute(
            [RSSISample(time: 900, rssi: -60), RSSISample(time: 400, rssi: -40), RSSISample(time: 750, rssi: -50),
             RSSISample(time: 1020, rssi: -80)], to: key)
        let visit = tracker.openVisit(key)
        #expect(visit?.checkIn == 750 && visit?.lastSeen == 1050 && visit?.samples == 5)
        #expect(visit?.rssiMax == -50 && visit?.rssiSum == -330)
        #expect(tracker.counters.droppedSamples == 1)
        // The earlier samples made it a 300 s visit: it checks in now.
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn])
        #expect(changes.first?.visit.checkIn == 750)
    }

    @Test mutating func lateSamplesAfterTheLastSightingAreOrdinarySightings() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0])
        tracker.attribute([RSSISample(time: 200, rssi: -60), RSSISample(time: 100, rssi: -60), RSSISample(time: 900, rssi: -60)], to: key)
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn, .checkedOut])
        #expect(changes[1].visit.checkIn == 0 && changes[1].visit.checkOut == 200)
        #expect(tracker.openVisit(key)?.checkIn == 900)
    }

    @Test mutating func lateSamplesNeverReachIntoAClosedVisit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 100, 200])
        tracker.advance(to: 700)
        _ = tracker.takeChanges(includingUpdates: false)
        // 150 lies inside the closed visit; 510 and 550 come more than check-out (300 s) after
        // its end and open a new visit.
        tracker.attribute([RSSISample(time: 550, rssi: -60), RSSISample(time: 150, rssi: -60), RSSISample(time: 510, rssi: -60)], to: key)
        #expect(tracker.counters.droppedSamples == 1)
        #expect(tracker.openVisit(key)?.checkIn == 510)
        #expect(tracker.openVisit(key)?.samples == 2)
        // Nor does an open visit extend back into the previous one.
        tracker.attribute([RSSISample(time: 199, rssi: -60), RSSISample(time: 211, rssi: -60)], to: key)
        #expect(tracker.openVisit(key)?.checkIn == 211)
        #expect(tracker.counters.droppedSamples == 2)
    }

    /// A write-only phone: its RSSI, measured under a new address, reaches the tracker only with
    /// its next payload write, after its visit was closed. Samples within the check-out limit of
    /// the visit's end show it never left: one visit, reopened, not two.
    @Test mutating func lateSamplesWithinCheckOutOfAClosedVisitReopenIt() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 100, 200])
        tracker.advance(to: 520)
        #expect(tracker.takeChanges(includingUpdates: false).map(\.event) == [.checkedIn, .checkedOut])
        tracker.attribute([RSSISample(time: 450, rssi: -50), RSSISample(time: 250, rssi: -60), RSSISample(time: 150, rssi: -60)], to: key)
        tracker.record(key, time: 700, rssi: -60)
        let changes = tracker.takeChanges(includingUpdates: true)
        #expect(changes.map(\.event) == [.reopened, .updated])
        #expect(changes[0].visit.checkIn == 0 && changes[0].visit.checkOut == nil)
        let visit = tracker.openVisit(key)
        #expect(visit?.checkIn == 0 && visit?.lastSeen == 700)
        // 150 lies inside the reopened visit: it counts too.
        #expect(visit?.samples == 7 && visit?.rssiMax == -50)
        #expect(tracker.counters.droppedSamples == 0)
        #expect(tracker.openVisitCount == 1)
        tracker.advance(to: 1001)
        let closed = tracker.takeChanges(includingUpdates: false)
        #expect(closed.map(\.event) == [.checkedOut])
        #expect(closed.first?.visit.checkOut == 700)
    }

    /// A walk-past that late samples show to have lasted: reopened as pending, then checked in.
    @Test mutating func lateSamplesCanTurnAWalkPastIntoAVisit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [0, 60])
        tracker.advance(to: 400)
        #expect(tracker.takeChanges(includingUpdates: false).map(\.event) == [.walkPast])
        tracker.attribute([RSSISample(time: 300, rssi: -60)], to: key)
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedIn])
        #expect(changes.first?.visit.checkIn == 0 && changes.first?.visit.lastSeen == 300)
    }

    /// The clock was synchronised: every time moves by the step; open visits go on.
    @Test mutating func shiftingTimesKeepsOpenVisitsOpen() {
        let key = tracker.key(for: .herald, payload: phone)
        let gone = tracker.key(for: .herald, payload: [0x02] + phone.dropFirst())
        sight(key, [0, 100, 200])
        sight(gone, [0, 150])
        tracker.advance(to: 460)
        _ = tracker.takeChanges(includingUpdates: false)
        tracker.shiftTimes(by: 7200)
        tracker.record(key, time: 7200 + 470, rssi: -60)
        tracker.advance(to: 7200 + 470)
        #expect(tracker.takeChanges(includingUpdates: false).isEmpty)
        #expect(tracker.openVisit(key)?.checkIn == 7200 && tracker.openVisit(key)?.lastSeen == 7670)
        // The closed visit's end moved too: a sample just after its old end is still after it.
        tracker.attribute([RSSISample(time: 7200 + 100, rssi: -60)], to: gone)
        #expect(tracker.counters.droppedSamples == 1)
    }

    @Test mutating func lateSamplesDoNotStretchAVisitToTheMaximum() {
        tracker = PresenceTracker(settings: settings(maxVisit: 400))
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [1000, 1200])
        tracker.attribute([RSSISample(time: 900, rssi: -60), RSSISample(time: 800, rssi: -60)], to: key)
        #expect(tracker.openVisit(key)?.checkIn == 900)
        #expect(tracker.counters.droppedSamples == 1)
    }

    @Test mutating func aResumedVisitContinuesCheckedInWithoutANewCheckIn() {
        let resumed = Visit(kind: .herald, payload: phone, checkIn: 0, lastSeen: 500, samples: 40, rssiMax: -50, rssiSum: -2400)
        let key = tracker.resume(resumed, now: resumed.lastSeen)
        #expect(key != nil)
        #expect(tracker.resume(resumed, now: resumed.lastSeen) == nil)
        if let key { sight(key, [600]) }
        #expect(tracker.takeChanges(includingUpdates: false).isEmpty)
        let changes = tracker.takeChanges(includingUpdates: true)
        #expect(changes.map(\.event) == [.updated])
        #expect(changes.first?.visit.checkIn == 0 && changes.first?.visit.samples == 41)
    }

    /// After a power cut the last sighting on disk is older than the node's own (up to a commit
    /// interval): the check-out limit counts from the restart, and an unseen visit still ends at
    /// its last sighting.
    @Test mutating func aResumedVisitCountsItsAbsenceFromTheRestart() {
        let other = heraldPayload(2)
        let stays = tracker.resume(Visit(kind: .herald, payload: phone, checkIn: 0, lastSeen: 500, samples: 10, rssiMax: -50, rssiSum: -600), now: 1000)
        let gone = tracker.resume(Visit(kind: .herald, payload: other, checkIn: 100, lastSeen: 600, samples: 10, rssiMax: -50, rssiSum: -600), now: 1000)
        guard let stays, let gone else {
            Issue.record("not resumed")
            return
        }
        // 700 s after its last sighting on disk, 200 s after the restart: the same visit.
        sight(stays, [1200])
        tracker.advance(to: 1299)
        #expect(tracker.takeChanges(includingUpdates: false).isEmpty)
        tracker.advance(to: 1301)
        let changes = tracker.takeChanges(includingUpdates: false)
        #expect(changes.map(\.event) == [.checkedOut])
        #expect(changes.first?.key == gone && changes.first?.visit.checkOut == 600)
        #expect(tracker.openVisit(stays)?.checkIn == 0 && tracker.openVisit(stays)?.lastSeen == 1200)
        // A sighting a check-out limit after the last one (the restart long past) is a new visit.
        sight(stays, [1501])
        let next = tracker.takeChanges(includingUpdates: false)
        #expect(next.map(\.event) == [.checkedOut])
        #expect(next.first?.visit.checkOut == 1200)
    }

    @Test mutating func closeAllEndsEveryOpenVisitAtItsLastSighting() {
        let key = tracker.key(for: .herald, payload: phone)
        let short = tracker.key(for: .advert, payload: [9])
        sight(key, [0, 200])
        sight(short, [150])
        _ = tracker.takeChanges(includingUpdates: false)
        tracker.closeAll()
        let changes = tracker.takeChanges(includingUpdates: true)
        #expect(changes.events(.checkedOut).map(\.checkOut) == [200])
        #expect(changes.events(.walkPast).map(\.checkOut) == [150])
    }

    /// A GAEN identifier is never attributed late measurements, and each phone brings a new one
    /// every ~15 minutes: its key goes after the check-out limit, a Herald payload's after an hour.
    @Test mutating func advertIdentitiesAreReleasedAfterTheCheckOutLimit() {
        let gaen = tracker.key(for: .gaen, payload: Array(repeating: 7, count: 16))
        let herald = tracker.key(for: .herald, payload: phone)
        sight(gaen, [0, 200])
        sight(herald, [0, 200])
        tracker.advance(to: 501)  // both checked out at 200, idle since 501
        tracker.advance(to: 801)
        #expect(tracker.trackedIdentities == 2)
        tracker.advance(to: 802)
        #expect(tracker.trackedIdentities == 1)
        let gaenRecorded = tracker.record(gaen, time: 803, rssi: -60)
        let heraldRecorded = tracker.record(herald, time: 803, rssi: -60)
        #expect(!gaenRecorded && heraldRecorded)
    }

    @Test mutating func idleKeysAreReleasedAndTheirSlotsReused() {
        tracker = PresenceTracker(settings: settings(), keyLifetime: 600)
        let old = tracker.key(for: .herald, payload: phone)
        sight(old, [0])
        tracker.advance(to: 400)  // walk-past; idle since 400
        tracker.advance(to: 1000)
        #expect(tracker.trackedIdentities == 1)
        tracker.advance(to: 1001)
        #expect(tracker.trackedIdentities == 0)
        let staleRecorded = tracker.record(old, time: 1002, rssi: -60)
        #expect(!staleRecorded)
        #expect(tracker.counters.staleKeys == 1)

        let other = tracker.key(for: .herald, payload: heraldPayload(2))
        #expect(other != old)
        let otherRecorded = tracker.record(other, time: 1003, rssi: -60)
        #expect(otherRecorded)
        let staleAgain = tracker.record(old, time: 1004, rssi: -60)
        #expect(!staleAgain)
        #expect(tracker.openVisit(other)?.payload == heraldPayload(2))
        let again = tracker.key(for: .herald, payload: phone)
        let againRecorded = tracker.record(again, time: 1005, rssi: -60)
        #expect(againRecorded)
    }

    @Test mutating func outOfOrderSightingsJoinTheirVisit() {
        let key = tracker.key(for: .herald, payload: phone)
        sight(key, [100, 200, 150, 90])
        let visit = tracker.openVisit(key)
        #expect(visit?.checkIn == 90 && visit?.lastSeen == 200 && visit?.samples == 4)
    }
}
