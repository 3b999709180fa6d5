import Sightings
import Testing

@testable import VenueDiary

/// A tick looks only at the slots whose time has come (``PresenceTracker/advance(to:)``). This
/// drives identities through arrivals, stays, gaps past the check-out limit and key releases on
/// a clock that ticks every second, and checks after every tick against a model that looks at
/// every identity: the same visits open (with the same last sighting), the same keys held.
@Suite struct PresenceTrackerTickTests {
    enum Model {
        case open(last: Double)
        case idle(since: Double)
        case released
    }

    /// Key lifetimes shorter and longer than the check-out limit.
    @Test(arguments: [UInt64(1), 2, 3], [120.0, 900])
    func ticksCloseAndReleaseExactlyWhenAFullPassWould(seed: UInt64, keyLifetime: Double) {
        let checkOut = 300.0
        var tracker = PresenceTracker(settings: settings(checkOut: checkOut), keyLifetime: keyLifetime)
        let identities: [(PayloadKind, [UInt8])] =
            (0..<4).map { (.gaen, [UInt8](repeating: UInt8($0), count: 16)) } + (0..<4).map { (.herald, heraldPayload(UInt32($0))) }
        var model = [Model](repeating: .released, count: identities.count)
        var present = [Bool](repeating: false, count: identities.count)
        var random = seed
        func next() -> UInt64 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return random >> 33
        }
        for tick in 1...4000 {
            let now = Double(tick)
            for k in identities.indices {
                if next() % 200 == 0 { present[k].toggle() }  // arrives or leaves for a while
                guard present[k], next() % 3 == 0 else { continue }
                let time = now - 1 + Double(next() % 90 + 5) / 100  // between the ticks
                let key = tracker.key(for: identities[k].0, payload: identities[k].1)
                let recorded = tracker.record(key, time: time, rssi: -60)
                #expect(recorded)
                // Its visit goes on, or a new one opens (after a gap past the check-out limit
                // that no tick has closed yet, the tracker ends the old one at this sighting).
                model[k] = .open(last: time)
            }
            tracker.advance(to: now)
            _ = tracker.takeChanges(includingUpdates: false)
            for k in identities.indices {
                let lifetime = identities[k].0 == .gaen ? min(keyLifetime, checkOut) : keyLifetime
                switch model[k] {
                case .open(let last) where now - last > checkOut: model[k] = .idle(since: now)
                case .idle(let since) where now - since > lifetime: model[k] = .released
                default: break
                }
            }
            let held = model.filter { if case .released = $0 { false } else { true } }.count
            #expect(tracker.trackedIdentities == held, "tick \(tick)")
            for k in identities.indices {
                let open: Double?
                switch model[k] {
                case .open(let last): open = last
                case .idle: open = nil
                case .released: continue  // asking for its key would register it again
                }
                let key = tracker.key(for: identities[k].0, payload: identities[k].1)
                #expect(tracker.openVisit(key)?.lastSeen == open, "tick \(tick), identity \(k)")
            }
        }
    }
}
