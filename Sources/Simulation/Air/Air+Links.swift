import BLEHost
import Herald

/// One connection between the node and a phone.
struct Link: Sendable {
    let generation: UInt32
    let device: Int
    /// The node's role: central when the node connected, peripheral when the phone did.
    let role: LERole
    /// Connection interval, seconds: data moves at connection events.
    var interval: Double
    /// The phone's side: its GATT server (and, for a writer, its client procedure).
    var gatt = GATTConnection(link: 0)
    var reassembler = ACLReassembler()
    /// Latest scheduled delivery each way, so packets keep their order.
    var toPhoneAt = -Double.infinity
    var toHostAt = -Double.infinity
}

/// A phone acting as a central of the node: one that cannot advertise and writes to the node
/// every few seconds, or a Herald phone that reads the venue's payload once per stay.
struct CentralState: Sendable {
    enum Role: Sendable { case writer, venueReader }
    let role: Role
    var random: SimulationRandom
    var lastPayloadAt = -Double.infinity
    var handle: UInt16?
    /// The write in flight carries the payload (not an RSSI).
    var writingPayload = false
    /// The stay (presence segment index) whose venue payload was read (or given up on).
    var readStay: Int?
    /// Failed reads in a row; a reader gives up on a stay after three.
    var failures = 0
}

extension Air {
    // MARK: Links

    private mutating func allocateHandle() -> UInt16 {
        while links[nextHandle] != nil { nextHandle = nextHandle >= 0x0EFF ? 0x0040 : nextHandle + 1 }
        let handle = nextHandle
        nextHandle = nextHandle >= 0x0EFF ? 0x0040 : nextHandle + 1
        return handle
    }

    private mutating func openLink(role: LERole, device: Int, interval: Double) -> UInt16 {
        let handle = allocateHandle()
        linkGenerations &+= 1
        var link = Link(generation: linkGenerations, device: device, role: role, interval: interval)
        link.gatt = GATTConnection(link: handle)
        links[handle] = link
        counters.connectionsEstablished += 1
        // The link ends a supervision timeout after the phone leaves range.
        let leaves = truth.devices[device].segment(at: now)?.end ?? now
        schedule(.linkLost(handle: handle, generation: link.generation), at: leaves + configuration.supervisionTimeout)
        return handle
    }

    /// The node's pending LE Create Connection heard its peer: the link is up, or it failed.
    mutating func connect(as role: LERole, to device: Int, address: BluetoothAddress, parameters: LEConnectionParameters) {
        controller.initiating = nil
        if random.chance(configuration.connectionFailure) {
            counters.connectionsFailed += 1
            connectionComplete(
                LEConnectionComplete(
                    status: .connectionFailedToBeEstablished, handle: 0, role: role, peerAddressType: .random, peerAddress: address))
            return
        }
        let handle = openLink(role: role, device: device, interval: Double(parameters.intervalMax) * 0.001_25)
        if let link = links[handle], random.chance(configuration.parameterRequestChance) {
            schedule(.phoneRequestsParameters(handle: handle, generation: link.generation), at: now + random.uniform(0.1, 1))
        }
        connectionComplete(
            LEConnectionComplete(
                status: .success, handle: handle, role: role, peerAddressType: .random, peerAddress: address,
                interval: parameters.intervalMax, latency: parameters.latency, supervisionTimeout: parameters.supervisionTimeout))
    }

    /// The link is gone on the air (no event: the caller reports it).
    mutating func closeLink(_ handle: UInt16) {
        guard let link = links.removeValue(forKey: handle) else { return }
        // A phone's GATT server is kept while it has a link (a later link builds it again: it is
        // a value no link changes). Kept for good, a run of many days held the server of every
        // phone the node ever connected to.
        if !links.values.contains(where: { $0.device == link.device }) {
            databases[link.device] = nil
        }
        if var central = centrals[link.device], central.handle == handle {
            central.handle = nil
            centrals[link.device] = central
            switch central.role {
            case .writer:
                schedule(.centralWakes(device: link.device), at: now + (truth.devices[link.device].signalWriteInterval ?? 15))
            case .venueReader:
                schedule(.centralWakes(device: link.device), at: now + central.random.uniform(3, 8))
            }
        }
    }

    /// The phone ended the link (it left, or disconnected): the host hears of it.
    mutating func endLink(_ handle: UInt16, reason: HCIStatus) {
        guard links[handle] != nil else { return }
        closeLink(handle)
        outbox.append(DisconnectionComplete(handle: handle, reason: reason).packet)
    }

    /// RSSI of a link's phone as the node measures it now.
    mutating func linkRSSI(_ link: Link) -> Int {
        let device = truth.devices[link.device]
        guard let distance = device.distance(at: now) else { return -127 }
        let rssi = configuration.radio.meanRSSI(measuredPower: device.measuredPower, distance: distance)
            + random.normal(sd: configuration.radio.shadowingSD)
        return Int(min(max(rssi.rounded(), -127), 20))
    }

    // MARK: Data

    /// ACL data from the node's host: delivered to the phone at the link's next connection event.
    mutating func aclFromHost(_ body: [UInt8]) {
        guard let packet = try? ACLPacket(decoding: body[...]), var link = links[packet.header.handle] else { return }
        let at = max(now + random.uniform(0, link.interval), link.toPhoneAt)
        link.toPhoneAt = at
        links[packet.header.handle] = link
        schedule(.aclToPhone(handle: packet.header.handle, packet: body), at: at)
    }

    mutating func deliverToPhone(handle: UInt16, packet body: [UInt8]) {
        guard var link = links[handle], let packet = try? ACLPacket(decoding: body[...]) else { return }
        counters.aclToPhones += 1
        // The controller's buffer is free again.
        outbox.append(NumberOfCompletedPackets([.init(handle: handle, count: 1)]).packet)
        guard case .frame(let frame) = link.reassembler.receive(packet) else {
            links[handle] = link
            return
        }
        var actions: [GATTConnection.Action] = []
        if frame.channel == .att, let database = database(for: link.device) {
            actions = link.gatt.receive(frame.payload, database: database, now: instant(now))
        } else if frame.channel == .leSignalling, case .connectionParameterUpdateResponse? = try? L2CAPSignal(decoding: frame.payload) {
            counters.parameterResponses += 1
        }
        links[handle] = link
        phoneActions(actions, on: handle)
    }

    private mutating func database(for device: Int) -> GATTDatabase? {
        if let database = databases[device] { return database }
        let database = PhoneServices.database(for: truth.devices[device])
        databases[device] = database
        return database
    }

    /// Carries out what a phone's GATT side asked for.
    private mutating func phoneActions(_ actions: [GATTConnection.Action], on handle: UInt16) {
        for action in actions {
            guard var link = links[handle] else { return }
            switch action {
            case .send(let pdu):
                let at = max(now + link.interval, link.toHostAt)
                link.toHostAt = at
                links[handle] = link
                for fragment in ACLFragmenter.fragment(
                    handle: handle, channel: .att, payload: pdu, maximumDataLength: Int(configuration.aclDataLength))
                {
                    schedule(.aclToHost(handle: handle, generation: link.generation, packet: Self.fromController(fragment)), at: at)
                }
            case .write:
                counters.writesToPhones += 1
            case .disconnect:
                schedule(.phoneDisconnects(handle: handle, generation: link.generation), at: now + link.interval)
            case .procedureFinished(_, let result):
                if var central = centrals[link.device], central.handle == handle {
                    switch (central.role, result) {
                    case (.writer, .success):
                        if central.writingPayload {
                            central.lastPayloadAt = now
                            payloadWrites[link.device, default: []].append(now)
                        }
                    case (.venueReader, .success(.value(let value))):
                        central.readStay = stayIndex(link.device)
                        central.failures = 0
                        counters.venueReads += 1
                        venuePayloadRead = value
                    case (.venueReader, _):
                        central.failures += 1
                        if central.failures >= 3 {
                            central.readStay = stayIndex(link.device)
                            central.failures = 0
                        }
                    default:
                        break
                    }
                    centrals[link.device] = central
                }
                schedule(.phoneDisconnects(handle: handle, generation: link.generation), at: now + link.interval)
            case .subscriptionChanged, .notification, .indication, .valueRead, .writeRefused:
                break
            }
        }
    }

    /// The phone asks the node (its central) for a longer connection interval.
    mutating func requestParameters(on handle: UInt16) {
        guard var link = links[handle] else { return }
        counters.parameterRequests += 1
        let request = L2CAPSignal.connectionParameterUpdateRequest(
            identifier: 1, LEConnectionParameters(intervalMin: 24, intervalMax: 40, latency: 0, supervisionTimeout: 500))
        let at = max(now + link.interval, link.toHostAt)
        link.toHostAt = at
        links[handle] = link
        for fragment in ACLFragmenter.fragment(
            handle: handle, channel: .leSignalling, payload: request.encoded, maximumDataLength: Int(configuration.aclDataLength))
        {
            schedule(.aclToHost(handle: handle, generation: link.generation, packet: Self.fromController(fragment)), at: at)
        }
    }

    /// A fragment as a controller hands it to its host: the first one flagged 0b10.
    private static func fromController(_ fragment: [UInt8]) -> H4Packet {
        guard var packet = try? ACLPacket(decoding: fragment.dropFirst()) else { return H4Packet(type: .acl, body: Array(fragment.dropFirst())) }
        if packet.header.boundary == .firstNonFlushable { packet.header.boundary = .first }
        return H4Packet(type: .acl, body: Array(packet.h4Packet.dropFirst()))
    }

    // MARK: Phones connecting to the node

    /// The index of the device's presence segment at `now`.
    func stayIndex(_ device: Int) -> Int? {
        truth.devices[device].presence.firstIndex { $0.contains(now) }
    }

    /// Schedules the phone's first attempt in its next stay after `time`.
    mutating func scheduleCentralArrival(_ device: Int, after time: Double) {
        guard var central = centrals[device],
            let segment = truth.devices[device].presence.first(where: { $0.start > time })
        else { return }
        let at = segment.start + (central.role == .writer ? central.random.uniform(1, 3) : central.random.uniform(2, 20))
        centrals[device] = central
        schedule(.centralWakes(device: device), at: at)
    }

    mutating func centralWakes(_ device: Int) {
        guard var central = centrals[device], central.handle == nil else { return }
        guard let stay = stayIndex(device) else {
            scheduleCentralArrival(device, after: now)
            return
        }
        if central.role == .venueReader, central.readStay == stay {
            scheduleCentralArrival(device, after: now)
            return
        }
        guard controller.advertisesHerald else {
            schedule(.centralWakes(device: device), at: now + 1)
            return
        }
        // It connects when it next hears the node's advert.
        let interval = Double(controller.advertising.intervalMax) * 0.000_625
        let at = now + central.random.uniform(0, interval) + 0.001
        centrals[device] = central
        schedule(.centralConnects(device: device), at: at)
    }

    mutating func centralConnects(_ device: Int) {
        guard var central = centrals[device], central.handle == nil else { return }
        guard stayIndex(device) != nil, controller.advertisesHerald else {
            schedule(.centralWakes(device: device), at: now + 1)
            return
        }
        if central.random.chance(configuration.connectionFailure) {
            centrals[device] = central
            schedule(.centralWakes(device: device), at: now + 1)
            return
        }
        // Legacy advertising stops when a central connects.
        controller.advertisingEnabled = false
        let handle = openLink(role: .peripheral, device: device, interval: 0.030)
        central.handle = handle
        counters.phoneSessions += 1
        connectionComplete(
            LEConnectionComplete(
                status: .success, handle: handle, role: .peripheral, peerAddressType: .random,
                peerAddress: truth.devices[device].rotation.address(at: now), interval: 24))

        let procedure: GATTClientProcedure
        switch central.role {
        case .writer:
            guard let payload = truth.devices[device].payload else { return }
            let write: SignalWrite
            central.writingPayload = now - central.lastPayloadAt >= configuration.writerPayloadInterval
            if central.writingPayload {
                write = .payload(payload)
            } else {
                let node = configuration.radio.meanRSSI(
                    measuredPower: truth.devices[device].measuredPower, distance: truth.devices[device].distance(at: now) ?? 10)
                write = .rssi(Int16(node.rounded()))
            }
            guard let value = try? write.encoded() else { return }
            procedure = .writeCharacteristic(HeraldUUIDs.androidSignalCharacteristic, inService: HeraldUUIDs.service, value: value)
        case .venueReader:
            procedure = .readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.service)
        }
        centrals[device] = central
        guard var link = links[handle] else { return }
        let (_, actions) = link.gatt.start(procedure, now: instant(now))
        links[handle] = link
        // A phone gives up on a link whose ATT request goes unanswered (ATT's 30 s timeout).
        schedule(.phoneDisconnects(handle: handle, generation: link.generation), at: now + 30)
        phoneActions(actions, on: handle)
    }
}
