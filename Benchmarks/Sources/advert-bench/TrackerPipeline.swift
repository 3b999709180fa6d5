import BLEHost
import Herald
import VenueDiary

/// The `pipeline` stage: the advertising-report path of `venue-beacon run` without the radio and
/// without the diary: HCI event decode → advert classification (AD parse included) → the Herald
/// node → the presence tracker, plus the once-a-second clock tick. The phones' side of each
/// connection the node asks for is played at once (``Phones``).
struct TrackerPipeline {
    var node = SensorNode()
    var tracker = PresenceTracker(settings: DiarySettings())
    /// The tracker key of each target whose payload is known: a measurement costs no payload hashing.
    var keys: [TargetID: VisitKey] = [:]
    var actions: [NodeAction] = []
    var linkActions: [NodeAction] = []
    var nextTick = 0.0
    var ticks = 0
    var reports = 0
    var measured = 0

    init() {
        actions.reserveCapacity(64)
        linkActions.reserveCapacity(64)
    }

    /// One HCI event packet (event code onwards) received at `now`. The classifier and the phones
    /// are passed in (borrowed): read from `self` while `self` is being changed, they would be
    /// copied per report.
    mutating func receive(_ packet: ArraySlice<UInt8>, now: Double, classifier: AdvertClassifier, phones: Phones) {
        if now >= nextTick {
            tick(now: now, phones: phones)
            nextTick = now.rounded(.down) + 1
        }
        guard case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: packet) else { return }
        for report in batch {
            reports += 1
            let sighting = AdvertSighting(report: report, classifier: classifier)
            node.advert(sighting, now: now, into: &actions)
            if !actions.isEmpty {
                handle(now: now)
            }
        }
    }

    private mutating func handle(now: Double) {
        for action in actions {
            guard case .event(let event) = action else { continue }
            switch event {
            case .measure(let target, let rssi, let payload?, _, let time):
                guard let rssi else { break }
                measured += 1
                if let key = keys[target.id], tracker.record(key, time: time, rssi: rssi) { break }
                let key = tracker.key(for: payload.kind, payload: payload.bytes)
                keys[target.id] = key
                tracker.record(key, time: time, rssi: rssi)
            case .read(let target, let payload, let earlier, _):
                let key = tracker.key(for: payload.kind, payload: payload.bytes)
                keys[target.id] = key
                tracker.attribute(earlier.filter { $0.rssi != nil }, to: key)
            default:
                break
            }
        }
        actions.removeAll(keepingCapacity: true)
    }

    /// The clock tick: the node starts connections (answered at once), the tracker closes visits.
    mutating func tick(now: Double, phones: Phones) {
        node.tick(now: now, into: &actions)
        var rounds = 0
        while !actions.isEmpty && rounds < 16 {
            rounds += 1
            swap(&actions, &linkActions)
            for action in linkActions {
                switch action {
                case .connect(let target):
                    node.link(.connected, target: target.id, now: now, into: &actions)
                case .discover(let target, _):
                    node.link(.discovered(phones.services(of: target.address)), target: target.id, now: now, into: &actions)
                case .readPayload(let target, _):
                    node.link(.payloadRead(phones.payload(of: target.address)), target: target.id, now: now, into: &actions)
                case .writeSignal(let target, _):
                    node.link(.signalWritten, target: target.id, now: now, into: &actions)
                case .disconnect(let target):
                    node.link(.disconnected, target: target.id, now: now, into: &actions)
                case .event, .immediateData:
                    actions.append(action)
                }
            }
            linkActions.removeAll(keepingCapacity: true)
            // Events (reads, measures) go to the tracker; link steps loop again.
            var steps: [NodeAction] = []
            for action in actions {
                if case .event = action { continue }
                steps.append(action)
            }
            handle(now: now)
            actions = steps
        }
        actions.removeAll(keepingCapacity: true)
        tracker.advance(to: now)
        // The diary takes transitions every tick and open-visit updates every 30 s.
        ticks += 1
        _ = tracker.takeChanges(includingUpdates: ticks % 30 == 0)
    }
}
