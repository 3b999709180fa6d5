import BLEHost
import Herald
import Simulation
import VenueDiary
import VenueNode

/// The `diary-pipeline` stage's state, owned by one value as the node's own loop owns its driver:
/// its methods run the adverts with static exclusivity (state captured by closures is checked at
/// run time on every access, which measured a fifth of this stage before). HCI event decode +
/// the Herald node's policy (target table, measurements, reads) + the DiaryPipeline into the
/// presence tracker and the SQLite diary (`FlushPolicy.live`), with a clock tick per simulated
/// second. Connections the node asks for are answered at once (``Phones``) so that known payloads
/// reach the presence tracker as in a venue.
struct DiaryPipelineRun {
    let adverts: Adverts
    let classifier: AdvertClassifier
    let origin = VenueConfiguration.defaultOrigin
    var pipeline: DiaryPipeline
    var node = SensorNode()
    var actions: [NodeAction] = []
    var errors = 0
    /// Link actions are answered at once, at the time of the advert or tick that caused them.
    var now = 0.0

    init(_ adverts: Adverts, classifier: AdvertClassifier, diaryPath: String) throws {
        self.adverts = adverts
        self.classifier = classifier
        pipeline = DiaryPipeline(diary: try VenueDiary(store: try DiaryStore(path: diaryPath), settings: DiarySettings(), now: origin))
    }

    mutating func perform() {
        var i = 0
        while i < actions.count {
            let action = actions[i]
            i += 1
            var answer: (LinkEvent, TargetID)? = nil
            switch action {
            case .event(let event): pipeline.handle(event, wallOffset: origin)
            case .connect(let t): answer = (.connected, t.id)
            case .discover(let t, _): answer = (.discovered(adverts.phones.services(of: t.address)), t.id)
            case .readPayload(let t, _): answer = (.payloadRead(adverts.phones.payload(of: t.address)), t.id)
            case .writeSignal(let t, _): answer = (.signalWritten, t.id)
            case .disconnect(let t): answer = (.disconnected, t.id)
            case .immediateData: break
            }
            if let (event, id) = answer { node.link(event, target: id, now: now, into: &actions) }
        }
        actions.removeAll(keepingCapacity: true)
    }

    @inline(never)  // a frame of its own, for profilers
    mutating func run() {
        var second = 0.0
        let events = adverts.events
        for (k, range) in events.ranges.enumerated() {
            now = events.times[k]
            if now >= second {
                node.tick(now: now, into: &actions)
                perform()
                do { _ = try pipeline.tick(now: origin + now) } catch { errors += 1 }
                second += 1
            }
            guard case .le(.advertisingReport(let reports))? = try? HCIEvent(decoding: events.storage[range]) else { continue }
            for report in reports {
                node.advert(AdvertSighting(report: report, classifier: classifier), now: now, into: &actions)
            }
            perform()
        }
        do { _ = try pipeline.close(now: origin + adverts.duration) } catch { errors += 1 }
    }
}
