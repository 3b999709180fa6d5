import Herald

/// The truth of a venue over many days: every day's visitors, walk-pasts and unrecorded
/// phones within that day's opening hours, regulars who come back on later days, and the devices
/// fixed in the venue (in range while it is open). One ``GroundTruth`` for the whole run (the air
/// runs it from the first midnight to the last), and each day's part for judging that day.
public struct MultiDayTruth: Sendable {
    public let days: DaySchedule
    /// Every day's people and devices; virtual time 0 is the first day's midnight.
    public let truth: GroundTruth
    /// People each day: visitors (new and returning), of whom regulars coming back.
    public let visitorsByDay: [Int]
    public let regularsByDay: [Int]

    /// The day's part of the truth: every device keeps its place (device ids are indices) with
    /// only its presence segments that start on that day, so a visit belongs to the day it
    /// began on.
    public func truth(ofDay index: Int) -> GroundTruth {
        let day = days.days[index]
        func ofDay(_ segments: [PresenceSegment]) -> [PresenceSegment] {
            segments.filter { $0.start >= day.start && $0.start < day.end }
        }
        let devices = truth.devices.map { device in
            SimulatedDevice(
                id: device.id, kind: device.kind, owner: device.owner, payload: device.payload, advert: device.advert,
                advertInterval: device.advertInterval, signalWriteInterval: device.signalWriteInterval, rotation: device.rotation,
                measuredPower: device.measuredPower, presence: ofDay(device.presence), seed: device.seed)
        }
        let people = truth.people.compactMap { person -> Person? in
            let presence = ofDay(person.presence)
            guard !presence.isEmpty else { return nil }
            return Person(id: person.id, role: person.role, devices: person.devices, presence: presence)
        }
        var configuration = truth.configuration
        configuration.openingHours = day.openSeconds / 3600
        return GroundTruth(configuration: configuration, people: people, devices: devices)
    }
}

/// Generates a ``MultiDayTruth``: each opening of each day is a one-opening venue of
/// ``VenueModel`` (its share of the day's visitors, seeded by the day and the opening) moved to
/// its hours; then some of the day's visitors are regulars from earlier days, who come with the
/// phone (payload, addresses) and accessories they had before. Same inputs, same venue.
public enum MultiDayVenue {
    /// `venue` gives the visitors per day, the seed, the phone mix, behaviour and the diary's
    /// limits (its opening hours and origin are the days'); `regularShare` is the chance that a
    /// visitor on the second day or later is someone who came before.
    public static func generate(days: DaySchedule, venue: VenueConfiguration, regularShare: Double = 0.3) -> MultiDayTruth {
        var builder = Builder(venue: venue)
        var random = SimulationRandom(seed: venue.seed, stream: 0x4D44_0000_0000)
        var visitorsByDay: [Int] = []
        var regularsByDay: [Int] = []
        for day in days.days {
            var returning: Set<Int> = []
            var visitors = 0
            let open = day.openSeconds
            var assigned = 0
            for (r, opening) in day.openings.enumerated() {
                // The day's visitors shared over its openings by length, the rest to the last.
                let share = r == day.openings.count - 1
                    ? venue.visitors - assigned : Int((Double(venue.visitors) * opening.duration / open).rounded(.down))
                assigned += share
                guard share > 0, opening.duration > 0 else { continue }
                var one = venue
                one.visitors = share
                one.walkPasts = venue.visitors == 0 ? 0 : venue.walkPasts * share / venue.visitors
                one.fixedDevices = 0
                one.openingHours = opening.duration / 3600
                one.seed = SplitMix64.mix(venue.seed ^ SplitMix64.mix(UInt64(day.index) << 8 | UInt64(r)))
                let generated = VenueModel.generate(one)
                for person in generated.people {
                    if person.role == .visitor { visitors += 1 }
                    if person.role == .visitor, random.chance(regularShare),
                        let regular = builder.pickRegular(notAmong: returning, &random)
                    {
                        returning.insert(regular)
                        builder.comesBack(regular, with: person, shiftedBy: opening.open)
                    } else {
                        builder.add(person, devices: generated.devices, shiftedBy: opening.open)
                    }
                }
            }
            builder.closeDay()
            visitorsByDay.append(visitors)
            regularsByDay.append(returning.count)
        }
        builder.addFixedDevices(days)
        var configuration = venue
        configuration.origin = days.origin
        configuration.openingHours = (days.days.first?.openSeconds ?? 0) / 3600
        let truth = GroundTruth(configuration: configuration, people: builder.people, devices: builder.devices())
        return MultiDayTruth(days: days, truth: truth, visitorsByDay: visitorsByDay, regularsByDay: regularsByDay)
    }

    private struct Builder {
        let venue: VenueConfiguration
        var people: [Person] = []
        /// Devices as generated, with the presence they gather over the days.
        var drafts: [SimulatedDevice] = []
        var presence: [[PresenceSegment]] = []
        /// Visitors of the days before today (people ids), who may come back.
        var pool: [Int] = []
        var today: [Int] = []

        init(venue: VenueConfiguration) { self.venue = venue }

        mutating func pickRegular(notAmong taken: Set<Int>, _ random: inout SimulationRandom) -> Int? {
            guard !pool.isEmpty else { return nil }
            for _ in 0..<8 {
                let candidate = pool[random.below(pool.count)]
                if !taken.contains(candidate) { return candidate }
            }
            return nil
        }

        /// A new person (a day's venue numbered from 0) with their devices, renumbered for the run.
        mutating func add(_ person: Person, devices generated: [SimulatedDevice], shiftedBy offset: Double) {
            let id = people.count
            let segments = person.presence.map { shift($0, by: offset) }
            var carried: [Int] = []
            for index in person.devices {
                let device = generated[index]
                let deviceID = drafts.count
                // A Herald phone's payload names its owner: unique over the whole run.
                let payload = device.payload == nil ? nil : TestPayload.make(identifier: Int32(truncatingIfNeeded: 1000 + id))
                drafts.append(
                    SimulatedDevice(
                        id: deviceID, kind: device.kind, owner: id, payload: payload, advert: device.advert,
                        advertInterval: device.advertInterval, signalWriteInterval: device.signalWriteInterval,
                        rotation: device.rotation, measuredPower: device.measuredPower, presence: [], seed: device.seed))
                presence.append(segments)
                carried.append(deviceID)
            }
            people.append(Person(id: id, role: person.role, devices: carried, presence: segments))
            if person.role == .visitor { today.append(id) }
        }

        /// `regular` comes again, when and where the day's `person` would have been.
        mutating func comesBack(_ regular: Int, with person: Person, shiftedBy offset: Double) {
            let segments = person.presence.map { shift($0, by: offset) }
            people[regular].presence += segments
            for device in people[regular].devices { presence[device] += segments }
        }

        /// Today's new visitors may come back from tomorrow on.
        mutating func closeDay() {
            pool += today
            today.removeAll()
        }

        /// The venue's fixed devices, in range whenever it is open.
        mutating func addFixedDevices(_ days: DaySchedule) {
            var one = venue
            one.visitors = 0
            one.walkPasts = 0
            one.applePhoneShare = 0
            one.openingHours = 1
            let fixed = VenueModel.generate(one).devices
            let openings = days.days.flatMap(\.openings)
            for device in fixed {
                guard let path = device.presence.first?.path else { continue }
                let deviceID = drafts.count
                drafts.append(
                    SimulatedDevice(
                        id: deviceID, kind: device.kind, owner: nil, payload: nil, advert: device.advert,
                        advertInterval: device.advertInterval, signalWriteInterval: nil, rotation: device.rotation,
                        measuredPower: device.measuredPower, presence: [], seed: device.seed))
                presence.append(openings.map { PresenceSegment(start: $0.open, end: $0.close, path: path) })
            }
        }

        func devices() -> [SimulatedDevice] {
            zip(drafts, presence).map { device, segments in
                SimulatedDevice(
                    id: device.id, kind: device.kind, owner: device.owner, payload: device.payload, advert: device.advert,
                    advertInterval: device.advertInterval, signalWriteInterval: device.signalWriteInterval,
                    rotation: device.rotation, measuredPower: device.measuredPower, presence: segments, seed: device.seed)
            }
        }

        private func shift(_ segment: PresenceSegment, by offset: Double) -> PresenceSegment {
            PresenceSegment(
                start: segment.start + offset, end: segment.end + offset,
                path: DistancePath(segment.path.waypoints.map { .init(time: $0.time + offset, metres: $0.metres) }))
        }
    }
}
