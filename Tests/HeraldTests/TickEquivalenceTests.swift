import BLEHost
import Testing

@testable import Herald

/// The tick looks only at what the table says may be due (sessions, its forgetting queues, the
/// recent list). These tests drive a node through randomized timelines and check every tick
/// against what a pass over the whole table (the tick before the table kept those structures)
/// decides for the same state: the same targets forgotten, the same targets ranked in the same
/// order.
@Suite struct TickEquivalenceTests {
    /// What the whole-table pass decided: targets to forget, and the ranking.
    struct Expected {
        var forget: Set<TargetID>
        var ranking: [TargetID]
        var reasons: [ConnectionCandidate.Reason: Int]
    }

    /// The pre-change tick's decisions, written out independently of the node's own predicates.
    static func fullPass(_ node: SensorNode, now: Double) -> Expected {
        let c = node.configuration
        var forget = Set<TargetID>()
        var candidates = [ConnectionCandidate]()
        for (id, r) in node.table.records {
            if node.table.sessions[id] != nil { continue }
            let clean = r.source == .advert ? min(c.advertTargetCleanInterval, c.peripheralCleanInterval) : c.peripheralCleanInterval
            if now - r.lastSeen >= clean {
                forget.insert(id)
                continue
            }
            guard r.connectable, !r.notHerald, !r.isVenueBeacon, now - r.lastSeen <= c.connectRecency, now >= r.nextAttemptAt,
                r.failures < c.maximumConnectionFailures, [.herald, .openTrace, .apple].contains(r.source)
            else { continue }
            guard let readAt = r.payloadReadAt, let payload = r.payload else {
                candidates.append(ConnectionCandidate(reason: .firstRead, since: r.firstSeen, id: id))
                continue
            }
            if let interval = c.payloadUpdateInterval, now - readAt >= interval {
                candidates.append(ConnectionCandidate(reason: .reread, since: readAt, id: id))
                continue
            }
            let sharingDue =
                c.payloadSharing && r.signal == .ios && !payload.bytes.isEmpty
                && (r.lastSharedAt.map { now - $0 >= c.payloadSharingInterval } ?? true)
                && node.recentIPhonePayloads.values.contains {
                    now - $0.seen <= c.payloadSharingExpiry && $0.bytes.count == payload.bytes.count && $0.bytes != payload.bytes
                }
            if sharingDue { candidates.append(ConnectionCandidate(reason: .share, since: r.lastSharedAt ?? r.firstSeen, id: id)) }
        }
        var queue = ConnectionQueue()
        queue.rank(candidates.sorted())
        var ranking = [TargetID]()
        while let id = queue.take() { ranking.append(id) }
        return Expected(forget: forget, ranking: ranking, reasons: Dictionary(candidates.map { ($0.reason, 1) }, uniquingKeysWith: +))
    }

    /// A randomized crowd: Herald Android phones (some rotating with a pseudo address), Apple
    /// devices, OpenTrace, GAEN and advert-protocol phones, writers; adverts connectable or not
    /// or scan responses; link outcomes of every kind; ticks once a simulated second.
    func run(seed: UInt64, configure: (inout NodeConfiguration) -> Void) throws -> (forgotten: Int, reasons: [ConnectionCandidate.Reason: Int]) {
        var random = TestRandom(state: seed)
        var h = NodeHarness(configure)
        h.node.controllerScansWhileConnecting = random.chance(50)
        let devices = 120
        var open = [TargetID]()  // sessions the test has yet to answer
        var forgottenTotal = 0
        var reasons = [ConnectionCandidate.Reason: Int]()
        var now = 0.0
        while now < 400 {
            // Adverts of a changing part of the crowd: devices come and go.
            for _ in 0..<random.below(40) {
                let n = UInt64(random.below(devices)), kind = n % 6
                let active = (Int(now) / 37 + Int(n)) % 5 != 0
                guard active else { continue }
                let connectable: Bool? = random.chance(15) ? nil : random.chance(85)
                let advertClass: AdvertClass
                switch kind {
                case 0: advertClass = .herald(pseudoAddress: PseudoDeviceAddress(int64: Int64(n)), apple: false)
                case 1: advertClass = .apple
                case 2: advertClass = random.chance(50) ? .herald(pseudoAddress: nil, apple: true) : .apple
                case 3: advertClass = .gaen(try GAENAdvert(serviceData: [UInt8](repeating: UInt8(n), count: 20)[...]))
                case 4: advertClass = random.chance(90) ? .openTrace : .advertProtocol(payload: [1, 2, UInt8(n)][...])
                default: advertClass = .ignored(.unrelated)
                }
                // Some Android phones rotate their address; the pseudo address links them.
                let address = kind == 0 && random.chance(10) ? n + 1000 * UInt64(1 + random.below(3)) : n
                let rssi: Int? = random.chance(10) ? nil : -40 - random.below(50)
                _ = h.advert(address, advertClass, rssi: rssi, connectable: connectable, at: now + Double(random.below(900)) / 1000)
            }
            if random.chance(5) {
                let writer = UInt64(devices + random.below(10))
                _ = h.write(random.chance(50) ? .rssi(-55) : .payload(TestPayload.make(identifier: Int32(writer))), from: writer, at: now + 0.95)
            }
            // Answer some of the sessions the node opened: mostly with the step each phase waits
            // for, sometimes with any outcome at all.
            for id in open.shuffledDeterministically(&random) where random.chance(60) {
                let t = now + 0.96
                guard let phase = h.node.table.sessions[id]?.phase else { continue }
                let services: DiscoveredServices = random.chance(40) ? .android : random.chance(80) ? .iPhone : .none
                let payload = TestPayload.make(identifier: Int32(id.rawValue % 40))
                let event: LinkEvent
                if random.chance(15) {
                    let any: [LinkEvent] = [.connectFailed, .connectRefused, .connected, .discovered(services), .payloadRead(payload), .readFailed, .signalWritten, .disconnected]
                    event = any[random.below(any.count)]
                } else {
                    switch phase {
                    case .connecting: event = random.chance(75) ? .connected : random.chance(70) ? .connectFailed : .connectRefused
                    case .discovering: event = .discovered(services)
                    case .reading: event = random.chance(85) ? .payloadRead(payload) : .readFailed
                    case .sharing: event = .signalWritten
                    case .disconnecting: event = .disconnected
                    }
                }
                _ = h.link(event, id, at: t)
            }
            now += 1
            if random.chance(3) {
                h.node.bluetoothState(.unavailable("reset"), now: now, into: &h.actions)
                h.node.bluetoothState(.running, now: now, into: &h.actions)
            }
            let expected = Self.fullPass(h.node, now: now)
            let before = Set(h.node.table.records.keys)
            let actions = h.tick(now)
            let after = Set(h.node.table.records.keys)
            #expect(before.subtracting(after) == expected.forget, "tick at \(now), seed \(seed)")
            var remaining = h.node.connectQueue
            var ranking = actions.connects
            while let id = remaining.take() { ranking.append(id) }
            #expect(ranking == expected.ranking, "tick at \(now), seed \(seed)")
            forgottenTotal += expected.forget.count
            reasons.merge(expected.reasons, uniquingKeysWith: +)
            open = h.node.table.sessions.keys.sorted()
            h.actions.removeAll()
        }
        return (forgottenTotal, reasons)
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func defaultsWithShortIntervals(seed: UInt64) throws {
        let totals = try run(seed: seed) {
            $0.peripheralCleanInterval = 60
            $0.advertTargetCleanInterval = 20
            $0.retryBackoff = 3
            $0.retryBackoffMaximum = 20
            $0.concurrentConnectionQuota = 3
            $0.connectRecency = 5
        }
        // The timelines exercise what they are for.
        #expect(totals.forgotten > 20)
        #expect(totals.reasons[.firstRead, default: 0] > 100)
        #expect(totals.reasons[.share, default: 0] > 10)
    }

    @Test(arguments: [5, 6] as [UInt64])
    func rereadsSharingAndALongRecency(seed: UInt64) throws {
        let totals = try run(seed: seed) {
            $0.peripheralCleanInterval = 45
            $0.advertTargetCleanInterval = 100  // longer than the clean interval: the smaller applies
            $0.payloadUpdateInterval = 25
            $0.payloadSharingInterval = 5
            $0.connectRecency = 50  // longer than the clean interval too
            $0.maximumConnectionFailures = 2
            $0.recordVenueBeacons = seed == 6
        }
        #expect(totals.forgotten > 20)
        #expect(totals.reasons[.reread, default: 0] > 10 && totals.reasons[.share, default: 0] > 10)
    }
}

extension Array {
    /// The elements in an order taken from `random` (Fisher–Yates).
    fileprivate func shuffledDeterministically(_ random: inout TestRandom) -> [Element] {
        var copy = self
        guard copy.count > 1 else { return copy }
        for i in stride(from: copy.count - 1, to: 0, by: -1) { copy.swapAt(i, random.below(i + 1)) }
        return copy
    }
}
