import Herald

/// Generates a simulated venue (people, their devices, when and how far they are) from a
/// ``VenueConfiguration``. Same configuration, same venue, to the bit.
///
/// People and their behaviour:
/// - visitors arrive over the opening hours (partly uniform, partly around a busy spell after the
///   middle), stay log-normally long (minutes to hours, cut at closing), sit at 1–10 m from the
///   node after walking in from the door (8–14 m), sometimes move seats, and walk out;
/// - some step out briefly (30 s to half the check-out limit: the same visit in truth) and some
///   come back after a long gap (at least twice the check-out limit: a second visit);
/// - walk-pasts are in range for 10–50 s, passing within 3–10 m;
/// - extra people come in with iPhones that have no Herald app;
/// - visitors may carry an Apple accessory or a wearable, and a few devices stay in range all day.
///
/// Each person draws from their own random stream, so changing the number of visitors keeps the
/// first ones as they were.
public enum VenueModel {
    public static func generate(_ configuration: VenueConfiguration) -> GroundTruth {
        var builder = Builder(configuration: configuration)
        for _ in 0..<configuration.visitors {
            builder.addPerson(role: .visitor)
        }
        for _ in 0..<configuration.walkPasts {
            builder.addPerson(role: .walkPast)
        }
        let unrecorded = Int((Double(configuration.visitors) * configuration.applePhoneShare).rounded())
        for _ in 0..<unrecorded {
            builder.addPerson(role: .unrecordedVisitor)
        }
        for k in 0..<configuration.fixedDevices {
            builder.addFixedDevice(k)
        }
        return GroundTruth(configuration: configuration, people: builder.people, devices: builder.devices)
    }

    /// Seconds between advertising events by kind, and the measured power at 1 m around which
    /// devices of the kind vary (dBm).
    static func advertInterval(_ kind: DeviceKind, _ random: inout SimulationRandom) -> Double {
        switch kind {
        case .heraldAndroid: return 0.25  // AdvertiseSettings BALANCED
        case .heraldAndroidWriter: return 0
        case .heraldIPhoneForeground: return 0.211_25  // one of Apple's recommended intervals
        case .heraldIPhoneBackground: return 1.022_5  // iOS slows advertising in the background
        case .gaenPhone: return 0.25  // Exposure Notification: 200–270 ms
        case .appleAccessory: return random.uniform(0.3, 1.5)
        case .applePhone: return 0.5
        case .otherDevice: return random.uniform(0.1, 2.0)
        }
    }

    static func measuredPower(_ kind: DeviceKind) -> Double {
        switch kind {
        case .heraldAndroid, .heraldAndroidWriter: return -65  // Herald advertises with TX power LOW
        case .heraldIPhoneForeground, .heraldIPhoneBackground, .applePhone: return -59
        case .gaenPhone, .appleAccessory: return -62
        case .otherDevice: return -60
        }
    }

    /// Companies whose manufacturer data the other devices carry (Microsoft, Samsung, Nordic, Huami).
    static let otherCompanies: [UInt16] = [0x0006, 0x0075, 0x0059, 0x0157]
    /// 16-bit services other devices list (none, Google Fast Pair, heart rate, battery).
    static let otherServices: [[UInt16]] = [[], [0xFE2C], [0x180D], [0x180F]]

    private struct Builder {
        let configuration: VenueConfiguration
        var people: [Person] = []
        var devices: [SimulatedDevice] = []

        init(configuration: VenueConfiguration) {
            self.configuration = configuration
        }

        mutating func addPerson(role: Person.Role) {
            let id = people.count
            var random = SimulationRandom(seed: configuration.seed, stream: 0x1_0000_0000 + UInt64(id))
            let presence: [PresenceSegment]
            switch role {
            case .visitor, .unrecordedVisitor: presence = visitorPresence(&random)
            case .walkPast: presence = walkPastPresence(&random)
            }
            let phoneKind: DeviceKind
            if role == .unrecordedVisitor {
                phoneKind = .applePhone
            } else {
                let pick = random.pick(weights: configuration.mix.weights) ?? 0
                phoneKind = DeviceKind.phoneKinds[pick]
            }
            var carried = [addDevice(phoneKind, owner: id, slot: 0, presence: presence, &random)]
            if random.chance(configuration.accessoryShare) {
                carried.append(addDevice(.appleAccessory, owner: id, slot: 1, presence: presence, &random))
            }
            if random.chance(configuration.wearableShare) {
                carried.append(addDevice(.otherDevice, owner: id, slot: 2, presence: presence, &random))
            }
            people.append(Person(id: id, role: role, devices: carried, presence: presence))
        }

        mutating func addFixedDevice(_ k: Int) {
            var random = SimulationRandom(seed: configuration.seed, stream: 0x3_0000_0000 + UInt64(k))
            let kind: DeviceKind = k % 3 == 1 ? .appleAccessory : .otherDevice
            let segment = PresenceSegment(
                start: 0, end: configuration.closingTime, path: .fixed(random.uniform(2, 15)))
            _ = addDevice(kind, owner: nil, slot: 0x100 + k, presence: [segment], &random)
        }

        private mutating func addDevice(
            _ kind: DeviceKind, owner: Int?, slot: Int, presence: [PresenceSegment], _ random: inout SimulationRandom
        ) -> Int {
            let id = devices.count
            let seed = SplitMix64.mix(configuration.seed ^ SplitMix64.mix(UInt64(owner ?? 0xFFFF) << 12 | UInt64(slot)))
            var payload: [UInt8]? = nil
            if kind.payloadKind == .herald, let owner {
                payload = TestPayload.make(identifier: Int32(1000 + owner))
            }
            let advert: AdvertContent?
            var rotationPeriod = random.uniform(12 * 60, 18 * 60)
            var style = AddressRotation.Style.resolvablePrivate
            switch kind {
            case .heraldAndroid:
                advert = .heraldAndroid(PseudoDeviceAddress(rawValue: random.next()))
                rotationPeriod = random.chance(configuration.fastRotationShare)
                    ? random.uniform(2, 10) : random.uniform(5 * 60, 15 * 60)
            case .heraldAndroidWriter:
                advert = nil
            case .heraldIPhoneForeground:
                advert = .heraldService
            case .heraldIPhoneBackground:
                advert = .apple(AppleData.heraldInBackground)
            case .gaenPhone:
                advert = .exposureNotification
                rotationPeriod = random.uniform(10 * 60, 20 * 60)
            case .appleAccessory:
                // A fixed device is an Apple TV; carried ones are AirPods, watches and Macs.
                let choices = AppleData.accessories
                advert = .apple(owner == nil ? choices[3] : choices[random.below(3)])
            case .applePhone:
                advert = .apple(AppleData.iPhoneNearbyInfo)
            case .otherDevice:
                var data = [UInt8]()
                for _ in 0..<(4 + random.below(9)) { data.append(UInt8(truncatingIfNeeded: random.next())) }
                advert = .other(
                    companyID: VenueModel.otherCompanies[random.below(VenueModel.otherCompanies.count)], data: data,
                    services: VenueModel.otherServices[random.below(VenueModel.otherServices.count)])
                rotationPeriod = .infinity
                style = .staticRandom
            }
            let interval = VenueModel.advertInterval(kind, &random)
            let writes = kind == .heraldAndroidWriter ? random.uniform(4, 15) : nil
            let power = VenueModel.measuredPower(kind) + random.normal(sd: 3)
            let phase = rotationPeriod.isFinite ? random.uniform(0, rotationPeriod) : 0
            devices.append(
                SimulatedDevice(
                    id: id, kind: kind, owner: owner, payload: payload, advert: advert, advertInterval: interval,
                    signalWriteInterval: writes,
                    rotation: AddressRotation(period: rotationPeriod, phase: phase, seed: seed, style: style),
                    measuredPower: power, presence: presence, seed: seed))
            return id
        }

        // MARK: Behaviour

        private func visitorPresence(_ random: inout SimulationRandom) -> [PresenceSegment] {
            let c = configuration
            let closing = c.closingTime
            let latestArrival = max(0, closing - c.minimumStay)
            let arrival: Double
            if random.chance(0.6) {
                arrival = random.uniform(0, latestArrival)
            } else {
                arrival = min(max(random.normal(mean: 0.55 * closing, sd: 0.2 * closing), 0), latestArrival)
            }
            let stay = min(clampedStay(median: c.medianStay, &random), closing - arrival)
            var spans = [(arrival, arrival + stay)]

            let margin = 5 * 60.0
            let stepOut = random.uniform(30, max(30, c.checkOutSeconds / 2))
            let stepOutAt = random.unit()
            if stay >= 20 * 60, random.chance(c.stepOutChance) {
                let at = arrival + margin + stepOutAt * (stay - 2 * margin - stepOut)
                spans = [(arrival, at), (at + stepOut, arrival + stay)]
            }

            let returnGap = random.uniform(max(2 * c.checkOutSeconds, 15 * 60), max(2 * c.checkOutSeconds, 60 * 60))
            let secondStay = clampedStay(median: c.medianStay / 2, &random)
            if random.chance(c.returnChance) {
                let start = arrival + stay + returnGap
                if start + c.minimumStay <= closing {
                    spans.append((start, min(start + secondStay, closing)))
                }
            }
            return spans.map { PresenceSegment(start: $0.0, end: $0.1, path: seatedPath(from: $0.0, to: $0.1, &random)) }
        }

        private func clampedStay(median: Double, _ random: inout SimulationRandom) -> Double {
            let c = configuration
            return min(max(random.logNormal(median: median, sigma: c.staySigma), c.minimumStay), c.maximumStay)
        }

        /// In from the door, a seat (sometimes another one later), out to the door.
        private func seatedPath(from start: Double, to end: Double, _ random: inout SimulationRandom) -> DistancePath {
            typealias W = DistancePath.Waypoint
            let door = random.uniform(8, 14)
            var seat = random.uniform(1, 10)
            let walkIn = min(random.uniform(10, 30), (end - start) / 4)
            let walkOut = min(random.uniform(10, 30), (end - start) / 4)
            var points = [W(time: start, metres: door), W(time: start + walkIn, metres: seat)]
            var t = start + walkIn
            while true {
                t += random.uniform(15 * 60, 45 * 60)
                guard t + 20 < end - walkOut else { break }
                if random.chance(0.3) {
                    points.append(W(time: t, metres: seat))
                    seat = random.uniform(1, 10)
                    points.append(W(time: t + 15, metres: seat))
                }
            }
            points.append(W(time: end - walkOut, metres: seat))
            points.append(W(time: end, metres: door))
            return DistancePath(points)
        }

        private func walkPastPresence(_ random: inout SimulationRandom) -> [PresenceSegment] {
            typealias W = DistancePath.Waypoint
            let start = random.uniform(0, max(0, configuration.closingTime - 60))
            let duration = random.uniform(10, 50)
            let closest = random.uniform(3, 10)
            let far = 18.0
            let path = DistancePath([
                W(time: start, metres: far), W(time: start + duration / 2, metres: closest),
                W(time: start + duration, metres: far),
            ])
            return [PresenceSegment(start: start, end: start + duration, path: path)]
        }
    }
}
