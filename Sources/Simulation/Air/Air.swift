import BLEHost

/// The simulated air around the node: every device of a ``GroundTruth`` advertising, connecting
/// and exchanging data on the virtual clock, and the node's own LE controller, which speaks HCI to
/// the node's host (commands and ACL in, events and ACL out) exactly as a real one does.
///
/// A value with one owner (``VenueRun``'s loop, or `SimulatedTransport` in the `AirTransport`
/// target, which `run-bench` uses): the host's packets go in with ``send(_:)``, and
/// ``advance(until:)`` runs virtual time forward to the next packet for the host
/// (or a limit). Deterministic: the same truth and configuration give the same packets at the
/// same virtual times, whatever the host does in wall time between calls.
///
/// What the node's controller does:
/// - answers the commands the host uses (see ``Air+Commands.swift``) with Command Complete or
///   Command Status, refusing what a controller refuses (0x0C while advertising, scanning or
///   initiating where the spec says so, 0x12 for bad parameters, 0x01 for unknown opcodes);
/// - while scanning, reports the adverts it hears inside its scan windows, several reports per
///   event when they come within ``AirConfiguration/reportBatchWindow`` of each other;
/// - while initiating, connects at the next advert it hears from the peer (or fails with 0x3E,
///   at ``AirConfiguration/connectionFailure``), and cancels on request (0x02);
/// - carries ACL both ways at the link's connection events, returns buffer credits with Number Of
///   Completed Packets, and ends links whose phone walked away (0x08) after the supervision
///   timeout;
/// - stops advertising when a phone connects to it (legacy advertising), as controllers do.
///
/// The phones' side of links is each phone's GATT server (the project's `GATTDatabase` and
/// `GATTConnection`); phones that cannot advertise connect to the node and write to its signal
/// characteristic with the project's GATT client procedures.
public struct Air: Sendable {
    public let truth: GroundTruth
    public let configuration: AirConfiguration
    /// Virtual seconds since the venue opened.
    public private(set) var now: Double = 0
    public internal(set) var counters = AirCounters()

    var adverts: AdvertStream
    var queue = TimedEventHeap<Happening>()
    /// Packets for the host, in order, due at ``now``.
    var outbox: [H4Packet] = []
    var pendingReports: [LEAdvertisingReport] = []
    var pendingReportBytes = 0
    var controller = ControllerState()
    var links: [UInt16: Link] = [:]
    var nextHandle: UInt16 = 0x0040
    var linkGenerations: UInt32 = 0
    var random: SimulationRandom
    var databases: [Int: GATTDatabase] = [:]
    var centrals: [Int: CentralState] = [:]
    /// The last venue payload a phone read from the node.
    public internal(set) var venuePayloadRead: [UInt8]?
    /// When each phone that cannot advertise wrote its payload to the node and the node took the
    /// write (device index → virtual seconds, in order): when the node was told who it is. Its
    /// other writes carry an RSSI from an address that rotates (see ``WriterVisibility``).
    public internal(set) var payloadWrites: [Int: [Double]] = [:]
    /// Each device's advertising data for its latest rotation epoch (built once per epoch).
    var advertData: [(epoch: Int64, data: [UInt8])?]
    /// The devices with an entry in ``advertData``, and how many of them trigger the next sweep of
    /// those out of range (a run of many days hears thousands of devices, a few at a time).
    var advertDataHeld: [Int] = []
    var advertDataSweepAt = 1024
    /// Virtual time 0 as an instant, for the GATT code's clock.
    let instantBase: ContinuousClock.Instant

    /// Things that happen at a virtual time.
    enum Happening: Sendable {
        case toHost(H4Packet)
        case flushReports
        case aclToPhone(handle: UInt16, packet: [UInt8])
        case aclToHost(handle: UInt16, generation: UInt32, packet: H4Packet)
        case linkLost(handle: UInt16, generation: UInt32)
        case phoneDisconnects(handle: UInt16, generation: UInt32)
        case phoneRequestsParameters(handle: UInt16, generation: UInt32)
        case centralWakes(device: Int)
        case centralConnects(device: Int)
    }

    public init(truth: GroundTruth, configuration: AirConfiguration = AirConfiguration(), instantBase: ContinuousClock.Instant = .now) {
        self.truth = truth
        self.configuration = configuration
        self.instantBase = instantBase
        adverts = AdvertStream(devices: truth.devices, radio: configuration.radio)
        advertData = Array(repeating: nil, count: truth.devices.count)
        random = SimulationRandom(seed: truth.configuration.seed, stream: 0xA1_2000)
        for device in truth.devices {
            let role: CentralState.Role
            switch device.kind {
            case .heraldAndroidWriter: role = .writer
            case .heraldAndroid, .heraldIPhoneForeground, .heraldIPhoneBackground:
                guard configuration.phonesReadVenue else { continue }
                role = .venueReader
            default: continue
            }
            centrals[device.id] = CentralState(role: role, random: SimulationRandom(seed: device.seed, stream: 0x3717))
            scheduleCentralArrival(device.id, after: -.infinity)
        }
    }

    /// The instant the GATT code sees for virtual time `t`.
    public func instant(_ t: Double) -> ContinuousClock.Instant {
        instantBase + .nanoseconds(Int64((t * 1e9).rounded()))
    }

    // MARK: Running

    /// Runs virtual time forward until the node's host has packets (returned, in order, with
    /// ``now`` at their time) or `limit` is reached (an empty result, ``now`` = `limit`).
    public mutating func advance(until limit: Double) -> [H4Packet] {
        while outbox.isEmpty {
            let nextAdvert = adverts.nextEventTime ?? .infinity
            let nextHappening = queue.nextTime ?? .infinity
            let next = min(nextAdvert, nextHappening)
            guard next <= limit else {
                if limit > now { now = limit }
                break
            }
            if next > now { now = next }
            if nextHappening <= nextAdvert, let (_, happening) = queue.pop() {
                handle(happening)
            } else if let advert = adverts.next(notAfter: now) {
                heard(advert)
            }
        }
        var out: [H4Packet] = []
        swap(&out, &outbox)
        return out
    }

    /// When the next thing on the air happens (an advert or a scheduled event).
    public var nextEventTime: Double? {
        let t = min(adverts.nextEventTime ?? .infinity, queue.nextTime ?? .infinity)
        return t.isFinite ? t : nil
    }

    /// Forgets the payload writes before `time` (a multi-day run, once a day is judged: a
    /// year of them would grow with every writer that ever came).
    public mutating func forgetPayloadWrites(before time: Double) {
        for (device, writes) in payloadWrites {
            let kept = writes.filter { $0 >= time }
            payloadWrites[device] = kept.isEmpty ? nil : kept
        }
    }

    mutating func schedule(_ happening: Happening, at time: Double) {
        queue.schedule(happening, at: max(time, now))
    }

    private mutating func handle(_ happening: Happening) {
        switch happening {
        case .toHost(let packet):
            outbox.append(packet)
        case .flushReports:
            flushReports()
        case .aclToPhone(let handle, let packet):
            deliverToPhone(handle: handle, packet: packet)
        case .aclToHost(let handle, let generation, let packet):
            guard links[handle]?.generation == generation else { return }
            counters.aclToNode += 1
            outbox.append(packet)
        case .linkLost(let handle, let generation):
            guard links[handle]?.generation == generation else { return }
            counters.linksLost += 1
            endLink(handle, reason: .connectionTimeout)
        case .phoneDisconnects(let handle, let generation):
            guard links[handle]?.generation == generation else { return }
            endLink(handle, reason: .remoteUserTerminated)
        case .phoneRequestsParameters(let handle, let generation):
            guard links[handle]?.generation == generation else { return }
            requestParameters(on: handle)
        case .centralWakes(let device):
            centralWakes(device)
        case .centralConnects(let device):
            centralConnects(device)
        }
    }

    // MARK: Adverts

    private mutating func heard(_ advert: ReceivedAdvert) {
        counters.advertsHeard += 1
        let device = truth.devices[advert.device]
        // Simulated devices all use random addresses: an initiator looking for a public one
        // never matches them.
        if let initiating = controller.initiating, initiating.peerAddress == advert.address,
            initiating.peerAddressType == .random, device.isConnectable
        {
            connect(as: .central, to: advert.device, address: advert.address, parameters: initiating.connection)
            return
        }
        guard controller.scanning, inScanWindow(advert.time) else { return }
        let report = LEAdvertisingReport(
            eventType: device.isConnectable ? .connectableUndirected : .nonConnectableUndirected, addressType: .random,
            address: advert.address, data: advertisingData(advert.device, epoch: advert.rotationEpoch)[...],
            rawRSSI: Int8(clamping: advert.rssi))
        if pendingReportBytes + report.recordSize > LEAdvertisingReports.maximumRecordBytes { flushReports() }
        if pendingReports.isEmpty { schedule(.flushReports, at: now + configuration.reportBatchWindow) }
        pendingReports.append(report)
        pendingReportBytes += report.recordSize
    }

    mutating func advertisingData(_ device: Int, epoch: Int64) -> [UInt8] {
        if let cached = advertData[device], cached.epoch == epoch { return cached.data }
        let data = truth.devices[device].advertisingData(epoch: epoch)
        if advertData[device] == nil { advertDataHeld.append(device) }
        advertData[device] = (epoch, data)
        if advertDataHeld.count >= advertDataSweepAt { sweepAdvertData() }
        return data
    }

    /// Drops the advertising data of the devices out of range now (built again, alike, if they
    /// come back); the next sweep comes when the held entries have doubled, so a crowd that is
    /// all present costs no more than one pass per doubling.
    private mutating func sweepAdvertData() {
        var held: [Int] = []
        swap(&held, &advertDataHeld)
        for device in held {
            if truth.devices[device].segment(at: now) == nil {
                advertData[device] = nil
            } else {
                advertDataHeld.append(device)
            }
        }
        advertDataSweepAt = max(1024, 2 * advertDataHeld.count)
    }

    /// Whether a scanner with the host's interval and window listens at `time`.
    private func inScanWindow(_ time: Double) -> Bool {
        let interval = Double(controller.scan.interval) * 0.000_625
        let window = Double(controller.scan.window) * 0.000_625
        guard interval > 0, window < interval else { return true }
        let phase = (time - controller.scanStartedAt).truncatingRemainder(dividingBy: interval)
        return phase < window
    }

    mutating func flushReports() {
        guard !pendingReports.isEmpty else { return }
        if controller.leEventMask.contains(.advertisingReport) {
            outbox.append(LEAdvertisingReports.packet(pendingReports))
            counters.advertsReported += pendingReports.count
            counters.reportEvents += 1
        }
        pendingReports.removeAll(keepingCapacity: true)
        pendingReportBytes = 0
    }
}
