import Sightings
import Testing

@testable import VenueDiary

/// A flood of one-shot identifiers (BLE advert spam: random GAEN identifiers at the UART's
/// ceiling) must not keep real phones out of the diary (issue 24, item 4).
@Suite struct PresenceTrackerFloodTests {
    /// A small deterministic generator (SplitMix64), so that every run floods the same way.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// Uniform in [0, 1).
        mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
        mutating func payload() -> [UInt8] {
            let words = (next(), next())
            return withUnsafeBytes(of: words) { Array($0) }
        }
    }

    /// A phone present for 5–30 minutes, seen once in every minute it is there, at a random second.
    struct Phone {
        var payload: [UInt8]
        var times: [Double]
        var rssi: [Int]
    }

    /// `count` phones arriving in the first 5 minutes, each present 5–30 minutes and seen once a
    /// wall-clock minute (at a random moment of it), the first and last sightings being the visit.
    static func phones(_ count: Int, _ random: inout Generator) -> [Phone] {
        (0..<count).map { _ in
            let arrival = random.unit() * 300
            let departure = arrival + 300 + random.unit() * 1500
            var times: [Double] = []
            var minute = (arrival / 60).rounded(.down)
            while minute * 60 < departure {
                let start = max(minute * 60, arrival)
                let end = min(minute * 60 + 60, departure)
                times.append(start + random.unit() * (end - start))
                minute += 1
            }
            return Phone(payload: random.payload(), times: times, rssi: times.map { _ in -50 - Int(random.next() % 40) })
        }
    }

    /// Drives the tracker as the replay does (a tick at the start of every second, then that
    /// second's sightings in time order): `floodPerSecond` distinct random GAEN identifiers a
    /// second until `floodUntil`, and the phones. Returns the checked-out visits and what the
    /// test watches while it runs.
    static func run(
        _ tracker: inout PresenceTracker, phones: [Phone], floodPerSecond: Int, floodUntil: Int, seconds: Int,
        _ random: inout Generator, watch: (PresenceTracker) -> Void = { _ in }
    ) -> [Visit] {
        var bySecond: [Int: [(time: Double, phone: Int, sighting: Int)]] = [:]
        for (p, phone) in phones.enumerated() {
            for (s, time) in phone.times.enumerated() { bySecond[Int(time.rounded(.down)), default: []].append((time, p, s)) }
        }
        var visits: [Visit] = []
        for second in 0..<seconds {
            tracker.advance(to: Double(second))
            visits += tracker.takeChanges(includingUpdates: false).events(.checkedOut)
            let flood = second < floodUntil ? floodPerSecond : 0
            let own = (bySecond[second] ?? []).sorted { $0.time < $1.time }
            var next = 0
            for i in 0..<flood {
                let time = Double(second) + Double(i) / Double(flood)
                while next < own.count, own[next].time <= time {
                    let (t, p, s) = own[next]
                    tracker.record(Sighting(time: t, kind: .gaen, payload: phones[p].payload, rssi: phones[p].rssi[s]))
                    next += 1
                }
                tracker.record(Sighting(time: time, kind: .gaen, payload: random.payload(), rssi: -60 - Int(i % 30)))
            }
            for (t, p, s) in own[next...] {
                tracker.record(Sighting(time: t, kind: .gaen, payload: phones[p].payload, rssi: phones[p].rssi[s]))
            }
            if second % 60 == 59 { watch(tracker) }
        }
        tracker.closeAll()
        visits += tracker.takeChanges(includingUpdates: false).events(.checkedOut)
        return visits
    }

    /// The phones recorded as the visit they made: checked in at their first sighting, out at
    /// their last, with every sighting's RSSI.
    static func recorded(_ phones: [Phone], in visits: [Visit]) -> Int {
        let byPayload = Dictionary(grouping: visits, by: \.payload)
        return phones.filter { phone in
            guard let found = byPayload[phone.payload], found.count == 1, let visit = found.first else { return false }
            return visit.checkIn == phone.times.first && visit.checkOut == phone.times.last && visit.samples == phone.times.count
                && visit.rssiSum == phone.rssi.reduce(0, +) && visit.rssiMax == phone.rssi.max()
        }.count
    }

    @Test func aFloodOfOneShotIdentifiersKeepsNoPhoneOutOfTheDiary() {
        // 6,000 distinct random GAEN identifiers a second (the Pi's UART ceiling) for the first
        // 8 minutes, while 100 phones arrive (in the first 5) and check in: the filter of first
        // sightings fills in 131 s and runs full for the rest.
        var random = Generator(state: 24)
        let phones = Self.phones(100, &random)
        var tracker = PresenceTracker(settings: settings())
        var largest = (identities: 0, firstSightings: 0, bytes: 0)
        let visits = Self.run(&tracker, phones: phones, floodPerSecond: 6_000, floodUntil: 480, seconds: 2_200, &random) { t in
            largest = (
                max(largest.identities, t.trackedIdentities), max(largest.firstSightings, t.firstSightingsHeld),
                max(largest.bytes, t.firstSightingBytes)
            )
        }
        #expect(Self.recorded(phones, in: visits) >= 99)
        // Nothing but the phones was ever checked in.
        #expect(visits.count == phones.count)

        // Memory stayed bounded: no flood identifier took a key, and the filter stayed within
        // its stated bounds (786,432 first sightings, 16 MiB) while full.
        #expect(largest.identities <= phones.count)
        #expect(largest.firstSightings <= tracker.maximumFirstSightings && largest.firstSightings > 700_000)
        #expect(largest.bytes <= tracker.maximumFirstSightingBytes && tracker.maximumFirstSightingBytes == 16 << 20)

        // The counters say what was offered and what was dropped: every phone admitted once at
        // its second sighting, every flood identifier seen once and forgotten, most of them early
        // (the filter runs full 131 s into the flood), no visit evicted.
        let flood = 6_000 * 480
        let counters = tracker.counters
        #expect(counters.admitted == phones.count)
        #expect(counters.seenOnce == flood)
        #expect(counters.firstSightings == counters.admitted + counters.seenOnce && tracker.firstSightingsHeld == 0)
        let pushedOut = flood - tracker.maximumFirstSightings
        #expect((pushedOut - phones.count...pushedOut + phones.count).contains(counters.forgottenEarly))
        #expect(counters.pendingVisitsEnded == 0 && counters.identitiesEvicted == 0)
    }

    /// At its cap (65,536 identities holding a key) the tracker frees an eighth of it for the
    /// next identity admitted: the pending visits seen least and, of those, admitted last end as
    /// walk-pasts, counted; a checked-in visit never goes.
    @Test func pendingPhonesBeyondTheCapAreEvictedNewestFirstAndCounted() {
        var tracker = PresenceTracker(settings: settings())
        let count = 65_537
        func payload(_ n: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(n).bigEndian) { Array($0) } + [UInt8](repeating: 7, count: 8) }
        func sightAll(at start: Double) {
            tracker.advance(to: start)
            for n in 0..<count { tracker.record(Sighting(time: start + Double(n) / 1000, kind: .gaen, payload: payload(n), rssi: -60)) }
        }
        sightAll(at: 0)
        #expect(tracker.trackedIdentities == 0 && tracker.firstSightingsHeld == count)
        sightAll(at: 100)
        #expect(tracker.counters.admitted == count)
        let room = tracker.maximumIdentities / 8
        #expect(tracker.trackedIdentities == tracker.maximumIdentities - room + 1)
        #expect(tracker.counters.pendingVisitsEnded == room && tracker.counters.identitiesEvicted == room)
        let evicted = tracker.takeChanges(includingUpdates: false).events(.walkPast)
        #expect(Set(evicted.map(\.payload)) == Set((tracker.maximumIdentities - room..<tracker.maximumIdentities).map(payload)))
        // The others check in at their first sighting; the evicted ones start again at the filter.
        sightAll(at: 150)
        let checkedIn = tracker.takeChanges(includingUpdates: false).events(.checkedIn)
        #expect(checkedIn.count == tracker.maximumIdentities - room + 1)
        #expect(checkedIn.allSatisfy { Double($0.payload.prefix(8).reduce(0) { $0 << 8 | Int($1) }) / 1000 == $0.checkIn })
        #expect(tracker.firstSightingsHeld == room)
    }
}
