import BLEHost
import Foundation
import Herald

/// The venue node's radio loop, without I/O: the one place where its decisions are made. It
/// runs on top of the host engine in ``NodeCore``, which `venue-beacon run`'s host thread and the
/// simulated venue (`VenueRun`) drive alike.
///
/// It owns the node driver (the Herald policy and its connection steps) and the requests in
/// flight, and decides what the appliance does about the radio:
/// - opening hours: advertising and scanning off while the venue is closed (from the start, and
///   within a tick of closing time, when the diary is told to close open visits at their last
///   sighting), on again when it opens; the LEDs are told which it is;
/// - the watchdog: fed at each tick while the host is known to turn (the driver probes a quiet
///   controller);
/// - what is worth a log line (radio changes by ``RadioAnnouncer``, a stall, signal writes
///   refused for coming too fast), the status line, readiness.
///
/// Its owner feeds it the host's events, a tick about once a second with the wall time, and the
/// replies to the requests it asked for, all with the node's steady time; and carries out the
/// ``Output``: sensor events to the diary, requests to the host, notices to logs, LEDs and
/// systemd.
public struct NodeLoop: Sendable {
    public enum Input: Sendable {
        case host(HostEvent)
        /// The host answered a request of ``Output/requests``.
        case reply(HostRequestID, Result<HostReply, HostError>)
        /// About once a second.
        case tick(Tick)
    }

    /// What the shell knows at a tick that the loop does not own.
    public struct Tick: Sendable {
        /// Unix seconds (opening hours are wall-clock times).
        public var wall: Double
        /// Visits open in the diary (present phones, pending ones included), for the status.
        public var presentPhones: Int
        /// Open links, ours and phones' (the host's count: ``NodeCore`` fills it in).
        public var links: Int
        /// Herald-format log rows dropped so far (writes that failed, the log budget), for the status.
        public var heraldLogRowsDropped: Int
        /// What the diary's admission dropped in the last minute, if that looked like a flood
        /// (``DiaryKeeper/admissionLastMinute``), for the status.
        public var diaryAdmission: DiaryKeeper.Admission

        public init(
            wall: Double, presentPhones: Int = 0, links: Int = 0, heraldLogRowsDropped: Int = 0,
            diaryAdmission: DiaryKeeper.Admission = .init()
        ) {
            self.wall = wall
            self.presentPhones = presentPhones
            self.links = links
            self.heraldLogRowsDropped = heraldLogRowsDropped
            self.diaryAdmission = diaryAdmission
        }
    }

    /// What the appliance around the loop is told.
    public enum Notice: Sendable, Equatable {
        case log(LogLine)
        /// The radio's condition changed (LEDs).
        case radio(RadioCondition)
        /// The service is up (systemd `READY=1`), once: the radio runs; or the venue is closed and
        /// the controller is ready; or the controller could not be opened or set up at the first
        /// try, and the host goes on retrying with backoff (the status line and LED say so).
        case ready
        /// The status line changed.
        case status(String)
        /// The host turns: feed the watchdog.
        case watchdog
        /// Closing time: the diary closes every open visit at its last sighting.
        case checkOutAll
        /// Opening hours: whether the venue is open now (the status LED shows "closed"). Said at
        /// start and at every change, with a schedule only (without one it is always open).
        case open(Bool)
    }

    public struct Output: Sendable {
        /// For the diary, in order.
        public var events: [SensorEvent] = []
        /// For the host; each reply comes back as ``Input/reply(_:_:)``.
        public var requests: [(id: HostRequestID, request: HostRequest)] = []
        public var notices: [Notice] = []

        public init() {}

        public var isEmpty: Bool { events.isEmpty && requests.isEmpty && notices.isEmpty }

        public mutating func removeAll() {
            events.removeAll(keepingCapacity: true)
            requests.removeAll(keepingCapacity: true)
            notices.removeAll(keepingCapacity: true)
        }
    }

    /// A request in flight: the driver's work, or opening hours switching the radio.
    private enum Pending: Sendable {
        case work(NodeDriver.HostWork)
        case switchRadio(on: Bool)
    }

    public private(set) var driver: NodeDriver
    public let schedule: Schedule?
    /// Whether the venue is open (always, without a schedule): advertising and scanning are on.
    public private(set) var isOpen: Bool
    private let deviceName: String
    private let venueName: String
    private let startWall: Double
    private var pending: [HostRequestID: Pending] = [:]
    private var nextRequest: UInt64 = 1
    private var scratch = NodeDriver.Output()
    private var announcer = RadioAnnouncer()
    private var readySent = false
    private var stallReported = false
    private var status = ""
    private var limitedReported = (count: 0, at: -Double.infinity)

    /// `wall` is the time at start: outside opening hours the host starts with the radio off
    /// (``isOpen``), and ``start(into:)`` says so.
    public init(
        driver: NodeDriver, schedule: Schedule? = nil, wall: Double, deviceName: String, venueName: String
    ) {
        self.driver = driver
        self.schedule = schedule
        self.deviceName = deviceName
        self.venueName = venueName
        isOpen = schedule?.isOpen(at: Date(timeIntervalSince1970: wall)) ?? true
        startWall = wall
    }

    /// Requests in flight.
    public var requestsInFlight: Int { pending.count }

    /// The first notices, before any input.
    public func start(into out: inout Output) {
        guard let schedule else { return }
        if !isOpen {
            out.notices.append(.log(LogLine(.info, "opening hours: closed\(Self.until(schedule, startWall)); not advertising or scanning")))
        }
        out.notices.append(.open(isOpen))
    }

    public mutating func handle(_ input: Input, now: Double, into out: inout Output) {
        switch input {
        case .host(let event):
            driver.handle(.host(event), now: now, into: &scratch)
            if !readySent, case .state(let state) = event {
                switch state {
                case .ready where !isOpen:
                    // Closed at start: the service is ready once the controller is.
                    readySent = true
                    out.notices.append(.ready)
                case .unavailable, .recovering:
                    // No controller (none fitted, or broken): the service is up all the same and
                    // retries, rather than have systemd time out its start and restart it in a
                    // loop; the export button and the outbox keep working meanwhile.
                    readySent = true
                    out.notices.append(.ready)
                case .opening, .ready:
                    break
                }
            }
        case .reply(let id, let result):
            switch pending.removeValue(forKey: id) {
            case .work(let work)?:
                if let input = work.input(for: result) { driver.handle(input, now: now, into: &scratch) }
            case .switchRadio(let on)?:
                if case .failure(let error) = result {
                    out.notices.append(.log(LogLine(.warning, "Bluetooth: cannot switch advertising and scanning \(on ? "on" : "off"): \(error)")))
                }
            case nil:
                break
            }
        case .tick(let tick):
            driver.handle(.tick, now: now, into: &scratch)
            decide(tick, now: now, into: &out)
        }
        carry(now: now, into: &out)
    }

    // MARK: The appliance's decisions

    private mutating func decide(_ tick: Tick, now: Double, into out: inout Output) {
        if let schedule, schedule.isOpen(at: Date(timeIntervalSince1970: tick.wall)) != isOpen {
            isOpen.toggle()
            let until = Self.until(schedule, tick.wall)
            if isOpen {
                out.notices.append(.log(LogLine(.info, "opening hours: open\(until); advertising and scanning")))
            } else {
                out.notices.append(.log(LogLine(
                    .info, "opening hours: closed\(until); advertising and scanning stop, open visits close at their last sighting")))
                out.notices.append(.checkOutAll)
            }
            out.notices.append(.open(isOpen))
            request(.setRadio(advertising: isOpen, scanning: isOpen), as: .switchRadio(on: isOpen), into: &out)
        }
        if driver.hostResponsive(now: now) {
            if stallReported {
                out.notices.append(.log(LogLine(.notice, "Bluetooth: the host answers again")))
                stallReported = false
            }
            out.notices.append(.watchdog)
        } else if !stallReported {
            out.notices.append(.log(LogLine(
                .error, "Bluetooth: the host has not answered for \(Int(NodeDriver.stallLimit)) s; the watchdog is no longer fed")))
            stallReported = true
        }
        // While closed the radio is off on purpose: no "pause lasting" notice.
        if let lasting = announcer.tick(now: now), isOpen {
            out.notices.append(.log(LogLine(.notice, "Bluetooth: \(lasting)")))
        }
        let present = tick.presentPhones
        let line = (isOpen ? "" : "closed (opening hours); ")
            + "\(driver.condition); \(present) \(present == 1 ? "phone" : "phones") present; "
            + "\(driver.node.targetCount) devices followed; \(tick.links) \(tick.links == 1 ? "link" : "links")"
            + (tick.heraldLogRowsDropped > 0 ? "; \(tick.heraldLogRowsDropped) Herald log rows dropped" : "")
            + Self.admissionStatus(tick.diaryAdmission)
        if line != status {
            status = line
            out.notices.append(.status(line))
        }
        // Signal writes refused for coming too fast: a notice at most once a minute.
        let limited = driver.counters.rateLimitedWrites
        if limited > limitedReported.count, now - limitedReported.at >= 60 {
            out.notices.append(.log(LogLine(
                .notice,
                "Bluetooth: \(limited - limitedReported.count) signal writes refused for coming too fast (over 4 a second from one link)")))
            limitedReported = (limited, now)
        }
    }

    /// The status line's part for a minute of flood (empty otherwise): "; flood: …".
    static func admissionStatus(_ a: DiaryKeeper.Admission) -> String {
        guard a.looksLikeAFlood else { return "" }
        var text = "; flood in the last minute: \(a.seenOnce) identifiers seen once"
        if a.forgottenEarly > 0 { text += " (\(a.forgottenEarly) forgotten early)" }
        if a.identitiesEvicted > 0 { text += ", \(a.pendingEvicted) pending visits evicted" }
        return text
    }

    /// The driver's output: events as they are, work as requests, notes as notices.
    private mutating func carry(now: Double, into out: inout Output) {
        out.events.append(contentsOf: scratch.events)
        for work in scratch.work { request(work.request, as: .work(work), into: &out) }
        for note in scratch.notes {
            switch note {
            case .radio(let condition):
                let text = "Bluetooth: \(describe(condition))"
                switch announcer.change(to: condition, now: now) {
                case .info: out.notices.append(.log(LogLine(.info, text)))
                case .warning: out.notices.append(.log(LogLine(.warning, text)))
                case .debug: out.notices.append(.log(LogLine(.debug, text)))
                }
                out.notices.append(.radio(condition))
            case .ready:
                if !readySent {
                    readySent = true
                    out.notices.append(.ready)
                }
            case .immediateData(let target, let bytes):
                out.notices.append(.log(LogLine(.debug, "\(target) sent \(bytes) bytes of immediate data (not stored)")))
            }
        }
        scratch.removeAll()
    }

    private mutating func request(_ request: HostRequest, as what: Pending, into out: inout Output) {
        let id = HostRequestID(rawValue: nextRequest)
        nextRequest += 1
        pending[id] = what
        out.requests.append((id, request))
    }

    private func describe(_ condition: RadioCondition) -> String {
        switch condition {
        case .starting: return "opening \(deviceName)"
        case .running: return "advertising \"\(venueName)\" and scanning on \(deviceName)"
        case .partial: return condition.description
        case .unavailable(let reason): return "unavailable: \(reason); retrying with backoff"
        }
    }

    /// " until <local time>" of the next opening-hours change, if there is one this week.
    private static func until(_ schedule: Schedule, _ wall: Double) -> String {
        guard let change = schedule.nextChange(after: Date(timeIntervalSince1970: wall)) else { return "" }
        let format = DateFormatter()
        format.timeZone = schedule.timeZone
        format.dateFormat = "EEE HH:mm"
        return " until \(format.string(from: change))"
    }
}
