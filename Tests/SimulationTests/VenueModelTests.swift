import Herald
import Testing
import VenueDiary

@testable import Simulation

@Suite struct VenueModelTests {
    static let big = VenueModel.generate(VenueConfiguration(visitors: 2000, openingHours: 8, seed: 11))

    @Test func aSeedRepeatsTheVenue() {
        let config = VenueConfiguration(visitors: 60, openingHours: 3, seed: 5)
        let a = VenueModel.generate(config)
        let b = VenueModel.generate(config)
        #expect(a.devices == b.devices)
        #expect(a.people == b.people)
        #expect(a.visits == b.visits)
        var other = config
        other.seed = 6
        #expect(VenueModel.generate(other).visits != a.visits)
    }

    @Test func morePeopleLeaveTheFirstOnesAsTheyWere() {
        let small = VenueModel.generate(VenueConfiguration(visitors: 20, openingHours: 3, seed: 5, walkPasts: 0, fixedDevices: 0))
        let large = VenueModel.generate(VenueConfiguration(visitors: 40, openingHours: 3, seed: 5, walkPasts: 0, fixedDevices: 0))
        for person in small.people where person.role == .visitor {
            #expect(large.people[person.id].presence == person.presence)
            let phone = small.devices[person.devices[0]]
            #expect(large.devices[large.people[person.id].devices[0]].kind == phone.kind)
            #expect(large.devices[large.people[person.id].devices[0]].payload == phone.payload)
        }
    }

    @Test func everyoneIsInsideOnlyDuringOpeningHours() {
        let truth = Self.big
        let closing = truth.configuration.closingTime
        for device in truth.devices {
            for segment in device.presence {
                #expect(segment.start >= 0 && segment.end <= closing && segment.start < segment.end)
            }
            #expect(zip(device.presence, device.presence.dropFirst()).allSatisfy { $0.end < $1.start })
        }
    }

    @Test func staysWalkPastsAndGapsHaveTheirShapes() {
        let truth = Self.big
        let c = truth.configuration
        var stays: [Double] = []
        var stepOuts = 0
        var returns = 0
        for person in truth.people {
            switch person.role {
            case .walkPast:
                #expect(person.presence.count == 1)
                #expect(person.presence[0].duration >= 10 && person.presence[0].duration <= 50)
            case .visitor, .unrecordedVisitor:
                for (a, b) in zip(person.presence, person.presence.dropFirst()) {
                    let gap = b.start - a.end
                    // Never near the check-out limit: short gaps are one visit, long ones two.
                    #expect(gap <= c.checkOutSeconds / 2 || gap >= 2 * c.checkOutSeconds)
                    if gap <= c.checkOutSeconds / 2 { stepOuts += 1 } else { returns += 1 }
                }
                let phone = truth.devices[person.devices[0]]
                for visit in truth.visits where visit.device == phone.id && visit.kind == .herald {
                    stays.append(visit.duration)
                }
            }
        }
        stays.sort()
        #expect(stays.first! >= c.minimumStay - 1e-9)
        #expect(stays.last! <= c.maximumStay)
        // Log-normal around the median (cut at closing, so a little shorter).
        let median = stays[stays.count / 2]
        #expect(median > 0.7 * c.medianStay && median < 1.1 * c.medianStay)
        let visitors = Double(truth.people.filter { $0.role != .walkPast }.count)
        #expect(Double(returns) / visitors > 0.04 && Double(returns) / visitors < 0.12)
        #expect(Double(stepOuts) / visitors > 0.08 && Double(stepOuts) / visitors < 0.2)
    }

    @Test func arrivalsCoverTheOpeningHours() {
        let truth = Self.big
        let closing = truth.configuration.closingTime
        var perHour = [Int](repeating: 0, count: 8)
        for person in truth.people where person.role == .visitor {
            perHour[min(7, Int(person.presence[0].start / 3600))] += 1
        }
        // Everybody can arrive in every hour but the last few minutes; a busy spell after the middle.
        #expect(perHour.allSatisfy { $0 > 100 })
        #expect(perHour[4] > perHour[0])
        #expect(truth.people.allSatisfy { $0.presence[0].start < closing })
    }

    @Test func phonesFollowTheMix() {
        let truth = Self.big
        var counts: [DeviceKind: Int] = [:]
        for person in truth.people where person.role == .visitor {
            counts[truth.devices[person.devices[0]].kind, default: 0] += 1
        }
        let mix = PhoneMix.standard
        let total = mix.weights.reduce(0, +)
        for (kind, weight) in zip(DeviceKind.phoneKinds, mix.weights) {
            let share = Double(counts[kind] ?? 0) / 2000
            #expect(abs(share - weight / total) < 0.03, "\(kind)")
        }
    }

    @Test func devicesCarryWhatTheirKindAdvertises() throws {
        let truth = Self.big
        var payloads = Set<[UInt8]>()
        for device in truth.devices {
            switch device.kind {
            case .heraldAndroid:
                #expect(device.pseudoAddress != nil)
                #expect(device.advertInterval == 0.25)
            case .heraldAndroidWriter:
                #expect(device.advert == nil)
                #expect(device.signalWriteInterval.map { $0 >= 4 && $0 <= 15 } == true)
            case .heraldIPhoneForeground:
                #expect(device.advert == .heraldService)
            case .heraldIPhoneBackground:
                #expect(device.advert == .apple(AppleData.heraldInBackground))
            case .gaenPhone:
                #expect(device.advert == .exposureNotification)
                #expect(device.rotation.period >= 600 && device.rotation.period <= 1200)
            case .appleAccessory:
                guard case .apple(let data) = device.advert else {
                    Issue.record("accessory without Apple data")
                    continue
                }
                #expect(AppleDeviceFilter.herald.matches(appleManufacturerData: data[...]))
            case .applePhone:
                #expect(device.advert == .apple(AppleData.iPhoneNearbyInfo))
            case .otherDevice:
                #expect(device.rotation.period == .infinity)
            }
            if device.kind.payloadKind == .herald {
                let payload = try #require(device.payload)
                #expect(TestPayload.identifier(of: payload) != nil)
                #expect(payloads.insert(payload).inserted)
            } else {
                #expect(device.payload == nil)
            }
        }
        // Some Android phones rotate every few seconds, the others every few minutes.
        let android = truth.devices.filter { $0.kind == .heraldAndroid }.map(\.rotation.period)
        let fast = android.filter { $0 <= 10 }.count
        #expect(android.allSatisfy { $0 <= 10 || ($0 >= 300 && $0 <= 900) })
        #expect(Double(fast) / Double(android.count) > 0.05 && Double(fast) / Double(android.count) < 0.15)
    }

    @Test func appleDataPassesOrFailsHeraldsFilterAsMeant() {
        #expect(!AppleDeviceFilter.herald.matches(appleManufacturerData: AppleData.heraldInBackground[...]))
        #expect(!AppleDeviceFilter.herald.matches(appleManufacturerData: AppleData.iPhoneNearbyInfo[...]))
        for accessory in AppleData.accessories {
            #expect(AppleDeviceFilter.herald.matches(appleManufacturerData: accessory[...]))
            #expect(accessory.count <= 27)
        }
    }

    @Test func distancesStayInsideTheVenueOrPassingBy() {
        let truth = Self.big
        for device in truth.devices {
            for segment in device.presence {
                for point in segment.path.waypoints {
                    #expect(point.metres >= 1 && point.metres <= 18)
                }
            }
        }
        // Distances change over a stay: most visitors walk in from farther away than they sit.
        let phone = truth.devices[truth.people[0].devices[0]]
        let segment = phone.presence[0]
        #expect(segment.path.distance(at: segment.start) > segment.path.distance(at: segment.start + segment.duration / 2))
    }

    @Test func truthHasAVisitPerStayAndPerGAENIdentifier() {
        let truth = Self.big
        let c = truth.configuration
        for device in truth.devices where device.kind.payloadKind == .herald {
            let visits = truth.visits.filter { $0.device == device.id }
            var expected = 1
            for (a, b) in zip(device.presence, device.presence.dropFirst()) where b.start - a.end > c.checkOutSeconds {
                expected += 1
            }
            #expect(visits.count == expected)
            #expect(visits.first?.arrive == device.presence.first?.start)
            #expect(visits.last?.leave == device.presence.last?.end)
        }
        for device in truth.devices where device.kind == .gaenPhone {
            for visit in truth.visits where visit.device == device.id {
                let epoch = device.rotation.epoch(at: visit.arrive)
                #expect(visit.payload == device.rotation.rollingProximityIdentifier(ofEpoch: epoch))
                #expect(visit.leave <= device.rotation.end(ofEpoch: epoch) + 1e-9)
            }
        }
        #expect(truth.visits.allSatisfy { truth.devices[$0.device].owner == $0.person })
        let walkPasts = truth.visits.filter { truth.people[$0.person].role == .walkPast }
        #expect(!walkPasts.isEmpty && walkPasts.allSatisfy { $0.duration < 60 })
    }

    @Test func truthJoinsShortGapsAndSplitsLongOnes() {
        typealias S = PresenceSegment
        let path = DistancePath.fixed(3)
        let device = SimulatedDevice(
            id: 0, kind: .heraldAndroid, owner: 0, payload: [1, 2, 3], advert: .heraldService, advertInterval: 0.25,
            signalWriteInterval: nil, rotation: .fixed(seed: 1), measuredPower: -60,
            presence: [
                S(start: 0, end: 100, path: path), S(start: 400, end: 500, path: path),  // gap 300: same visit
                S(start: 800.5, end: 900, path: path),  // gap 300.5: a new visit
            ], seed: 1)
        let visits = GroundTruth.visits(of: device, checkOut: 300)
        #expect(visits.map(\.arrive) == [0, 800.5])
        #expect(visits.map(\.leave) == [500, 900])
    }

    @Test func aGAENPhoneIsAVisitPerIdentifier() {
        let rotation = AddressRotation(period: 900, phase: 100, seed: 3)
        let device = SimulatedDevice(
            id: 0, kind: .gaenPhone, owner: 0, payload: nil, advert: .exposureNotification, advertInterval: 0.25,
            signalWriteInterval: nil, rotation: rotation, measuredPower: -60,
            presence: [PresenceSegment(start: 0, end: 2000, path: .fixed(3))], seed: 3)
        let visits = GroundTruth.visits(of: device, checkOut: 300)
        // Epochs change at 800 and 1700.
        #expect(visits.map(\.arrive) == [0, 800, 1700])
        #expect(visits.map(\.leave) == [800, 1700, 2000])
        #expect(Set(visits.map(\.payload)).count == 3)
        #expect(visits.allSatisfy { $0.kind == .gaen && $0.payload.count == 16 })
    }
}
