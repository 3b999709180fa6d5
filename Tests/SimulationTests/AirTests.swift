import BLEHost
import Herald
import Testing

@testable import Simulation

/// The simulated air and the node's virtual controller, driven by a scripted host.
@Suite struct AirTests {
    static func truth(_ devices: [SimulatedDevice]) -> GroundTruth {
        GroundTruth(configuration: VenueConfiguration(visitors: devices.count, seed: 77, walkPasts: 0), people: [], devices: devices)
    }

    static func phone(
        _ id: Int, _ kind: DeviceKind, from start: Double, to end: Double, metres: Double = 3, rotation: Double = 900
    ) -> SimulatedDevice {
        let advert: AdvertContent?
        switch kind {
        case .heraldAndroid: advert = .heraldAndroid(PseudoDeviceAddress(rawValue: 0x1234_5678_9A00 + UInt64(id)))
        case .heraldIPhoneForeground: advert = .heraldService
        case .heraldIPhoneBackground: advert = .apple(AppleData.heraldInBackground)
        case .gaenPhone: advert = .exposureNotification
        case .appleAccessory: advert = .apple(AppleData.accessories[0])
        default: advert = nil
        }
        return SimulatedDevice(
            id: id, kind: kind, owner: id, payload: kind.payloadKind == .herald ? TestPayload.make(identifier: Int32(500 + id)) : nil,
            advert: advert, advertInterval: kind == .heraldIPhoneBackground ? 1.0225 : 0.25,
            signalWriteInterval: kind == .heraldAndroidWriter ? 5 : nil,
            rotation: AddressRotation(period: rotation, phase: 0, seed: UInt64(40 + id)), measuredPower: -60,
            presence: [PresenceSegment(start: start, end: end, path: .fixed(metres))], seed: UInt64(90 + id))
    }

    /// What the node advertises: flags and the Herald service.
    static let heraldAdvert = try! AdvertisingPayload([0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC])

    static let noFailures = AirConfiguration(radio: RadioModel(advertLoss: 0.1), connectionFailure: 0, phonesReadVenue: false, parameterRequestChance: 0)

    @Test func theControllerAnswersTheInitSequence() throws {
        var host = ScriptedHost(Air(truth: Self.truth([])))
        #expect(host.status(Reset()) == .success)
        #expect(host.status(SetEventMask()) == .success)
        #expect(host.status(LESetEventMask()) == .success)
        #expect(host.status(WriteLEHostSupported()) == .success)
        guard case .commandComplete(let buffers)? = host.command(LEReadBufferSize()) else {
            Issue.record("no LE Read Buffer Size")
            return
        }
        let sizes = try LEReadBufferSize.decodeReturn(buffers.result)
        #expect(sizes.dataLength == 27 && sizes.packetCount == 4)
        guard case .commandComplete(let address)? = host.command(ReadBDAddr()) else {
            Issue.record("no BD_ADDR")
            return
        }
        #expect(try ReadBDAddr.decodeReturn(address.result) == AirConfiguration().nodeAddress)
        #expect(host.status(LEReadSupportedStates()) == .success)
        #expect(host.status(LESetRandomAddress(address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_01))) == .success)
    }

    @Test func theControllerRefusesWhatControllersRefuse() {
        var host = ScriptedHost(Air(truth: Self.truth([])))
        host.initialise()
        #expect(host.status(LESetScanEnable(true)) == .success)
        #expect(host.status(LESetScanParameters()) == .commandDisallowed)
        #expect(host.status(LESetRandomAddress(address: BluetoothAddress(rawValue: 0xC0_00_00_00_00_01))) == .commandDisallowed)
        #expect(host.status(LECreateConnectionCancel()) == .commandDisallowed)
        #expect(host.status(LESetAdvertisingParameters(intervalMin: 0x10, intervalMax: 0x10)) == .invalidParameters)
        #expect(host.status(LESetAdvertisingParameters(ownAddressType: .random)) == .success)
        // Random own address without one set (a fresh controller after reset).
        _ = host.command(Reset())
        _ = host.command(LESetAdvertisingParameters(ownAddressType: .random))
        #expect(host.status(LESetAdvertisingEnable(true)) == .invalidParameters)
        #expect(host.status(Disconnect(handle: 0x0040)) == .unknownConnectionIdentifier)
        // An opcode the controller does not know.
        host.air.send(H4Packet(type: .command, body: [0x99, 0x20, 0x00]))
        let unknown = host.wait(until: host.air.now) {
            if case .commandComplete(let c) = $0 { return c.opcode.rawValue == 0x2099 }
            return false
        }
        if case .commandComplete(let c)? = unknown?.event { #expect(c.result.status == .unknownCommand) }
        // Malformed parameters.
        host.air.send(H4Packet(type: .command, body: [0x0C, 0x20, 0x01, 0x01]))
        let malformed = host.wait(until: host.air.now) {
            if case .commandComplete(let c) = $0 { return c.opcode == .leSetScanEnable }
            return false
        }
        if case .commandComplete(let c)? = malformed?.event { #expect(c.result.status == .invalidParameters) }
        #expect(host.air.counters.commandsRefused >= 8)
    }

    @Test func scanningReportsAdvertsWithDistanceRSSIAndRotatingAddresses() throws {
        let phones = [
            Self.phone(0, .heraldAndroid, from: 0, to: 100, metres: 2, rotation: 30),
            Self.phone(1, .gaenPhone, from: 0, to: 100, metres: 12),
            Self.phone(2, .appleAccessory, from: 50, to: 100),
        ]
        let truth = Self.truth(phones)
        var host = ScriptedHost(Air(truth: truth, configuration: Self.noFailures))
        host.initialise()
        #expect(host.status(LESetScanParameters(interval: 0x0010, window: 0x0010)) == .success)
        #expect(host.status(LESetScanEnable(true)) == .success)
        host.run(until: 100)
        let classifier = try AdvertClassifier()
        var perDevice: [Int: [Int]] = [:]
        var addresses = Set<BluetoothAddress>()
        var events = 0
        for (time, event) in host.events {
            guard case .le(.advertisingReport(let reports)) = event else { continue }
            events += 1
            for report in reports {
                let device = try #require(phones.firstIndex { $0.rotation.address(at: time) == report.address })
                perDevice[device, default: []].append(Int(try #require(report.rssi)))
                switch (device, classifier.classify(report.data)) {
                case (0, .herald(let pseudo, let apple)):
                    #expect(pseudo == phones[0].pseudoAddress && !apple)
                    #expect(report.eventType == .connectableUndirected)
                    addresses.insert(report.address)
                case (1, .gaen(let gaen)):
                    #expect(gaen.rpi == phones[1].rotation.rollingProximityIdentifier(ofEpoch: phones[1].rotation.epoch(at: time)))
                    #expect(report.eventType == .nonConnectableUndirected)
                case (2, .ignored(.appleAccessory)):
                    #expect(time >= 50)
                default:
                    Issue.record("device \(device) classified as \(classifier.classify(report.data))")
                }
            }
        }
        // 100 s at 250 ms with 10 % loss: about 360 reports for each phone, fewer for the accessory.
        #expect((330...390).contains(perDevice[0]?.count ?? 0))
        #expect((330...390).contains(perDevice[1]?.count ?? 0))
        #expect((perDevice[2]?.count ?? 0) > 20)
        // Several reports share an event; the rotating phone showed four addresses.
        #expect(events < host.air.counters.advertsReported)
        #expect(addresses.count == 4)
        // Closer is louder.
        let mean = perDevice.mapValues { Double($0.reduce(0, +)) / Double($0.count) }
        #expect(mean[0]! > mean[1]! + 10)
    }

    @Test func aScanWindowHearsItsShareOfAdverts() {
        let truth = Self.truth([Self.phone(0, .heraldIPhoneForeground, from: 0, to: 200)])
        var full = ScriptedHost(Air(truth: truth, configuration: Self.noFailures))
        var half = ScriptedHost(Air(truth: truth, configuration: Self.noFailures))
        full.initialise()
        half.initialise()
        _ = full.command(LESetScanParameters(interval: 0x0100, window: 0x0100))
        _ = half.command(LESetScanParameters(interval: 0x0100, window: 0x0080))
        _ = full.command(LESetScanEnable(true))
        _ = half.command(LESetScanEnable(true))
        full.run(until: 200)
        half.run(until: 200)
        let ratio = Double(half.air.counters.advertsReported) / Double(full.air.counters.advertsReported)
        #expect(ratio > 0.4 && ratio < 0.6)
    }

    /// Connects the scripted host to `device` as central; returns the handle.
    static func connect(_ host: inout ScriptedHost, to device: SimulatedDevice) -> UInt16? {
        #expect(host.status(LECreateConnection(peerAddress: device.rotation.address(at: host.air.now), peerAddressType: .random)) == .success)
        guard case .le(.connectionComplete(let complete))? = host.wait(until: host.air.now + 5, for: {
            if case .le(.connectionComplete) = $0 { return true }
            return false
        })?.event, complete.status == .success else { return nil }
        #expect(complete.role == .central)
        return complete.handle
    }

    @Test func aCentralReadsAnAndroidPhonesPayloadOverGATT() throws {
        let phone = Self.phone(0, .heraldAndroid, from: 0, to: 300)
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: Self.noFailures))
        host.initialise()
        host.run(until: 5)
        let handle = try #require(Self.connect(&host, to: phone))
        var client = GATTConnection(link: handle)
        let database = try GATTDatabase(deviceName: "node", services: [])
        let (_, start) = client.start(
            .readCharacteristic(HeraldUUIDs.payloadCharacteristic, inService: HeraldUUIDs.service), now: host.air.instant(host.air.now))
        let actions = host.gatt(&client, handle: handle, database: database, first: start, until: 60) { actions in
            actions.contains { if case .procedureFinished = $0 { return true } else { return false } }
        }
        let result = actions.compactMap { action -> Result<GATTClientResult, GATTClientError>? in
            if case .procedureFinished(_, let result) = action { return result }
            return nil
        }.first
        let payload = try #require(phone.payload)
        #expect(result == .success(.value(payload)))
        // The phone's 129 bytes took Read Blobs at the default MTU: many exchanges, each at a connection event.
        #expect(host.air.now > 5.2)
        #expect(host.credits == 4)

        #expect(host.status(Disconnect(handle: handle)) == .success)
        let gone = host.wait(until: host.air.now + 1) {
            if case .disconnectionComplete = $0 { return true }
            return false
        }
        guard case .disconnectionComplete(let d)? = gone?.event else {
            Issue.record("no Disconnection Complete")
            return
        }
        #expect(d.handle == handle && d.reason == .localHostTerminated)
        #expect(host.status(ReadRSSI(handle: handle)) == .unknownConnectionIdentifier)
    }

    @Test func anIPhoneInTheBackgroundShowsItsServiceOnlyAfterConnecting() throws {
        let phone = Self.phone(0, .heraldIPhoneBackground, from: 0, to: 300)
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: Self.noFailures))
        host.initialise()
        _ = host.command(LESetScanEnable(true))
        host.run(until: 5)
        let classifier = try AdvertClassifier()
        let classes = host.events.compactMap { entry -> AdvertClass? in
            guard case .le(.advertisingReport(let reports)) = entry.event else { return nil }
            return reports.first(where: { _ in true }).map { classifier.classify($0.data) }
        }
        #expect(!classes.isEmpty && classes.allSatisfy { $0 == AdvertClass.apple })
        _ = host.command(LESetScanEnable(false))
        let handle = try #require(Self.connect(&host, to: phone))
        var client = GATTConnection(link: handle)
        let (_, start) = client.start(.discoverAllPrimaryServices(), now: host.air.instant(host.air.now))
        let actions = host.gatt(&client, handle: handle, database: try GATTDatabase(deviceName: "", services: []), first: start, until: 60) {
            $0.contains { if case .procedureFinished = $0 { return true } else { return false } }
        }
        guard case .procedureFinished(_, .success(.services(let services)))? = actions.last else {
            Issue.record("no services: \(actions)")
            return
        }
        #expect(services.contains { $0.uuid == HeraldUUIDs.service })
        #expect(host.status(ReadRSSI(handle: handle)) == .success)
    }

    @Test func aPendingConnectionWaitsForItsPeerAndCanBeCancelled() {
        // The phone has gone by the time the host connects to the address it saw.
        let phone = Self.phone(0, .heraldAndroid, from: 0, to: 10)
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: Self.noFailures))
        host.initialise()
        host.run(until: 12)
        #expect(host.status(LECreateConnection(peerAddress: phone.rotation.address(at: 9), peerAddressType: .random)) == .success)
        #expect(host.status(LECreateConnection(peerAddress: phone.rotation.address(at: 9), peerAddressType: .random)) == .commandDisallowed)
        host.run(until: 24)
        #expect(!host.events.contains { if case .le(.connectionComplete) = $0.event { return true } else { return false } })
        #expect(host.status(LECreateConnectionCancel()) == .success)
        guard case .le(.connectionComplete(let c))? = host.wait(until: host.air.now, for: { _ in true })?.event else {
            Issue.record("no LE Connection Complete after the cancel")
            return
        }
        #expect(c.status == .unknownConnectionIdentifier)
    }

    @Test func anInitiatorLookingForAPublicAddressNeverFindsARandomOne() {
        let phone = Self.phone(0, .heraldAndroid, from: 0, to: 100)
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: Self.noFailures))
        host.initialise()
        #expect(host.status(LECreateConnection(peerAddress: phone.rotation.address(at: 1), peerAddressType: .public)) == .success)
        host.run(until: 20)
        #expect(host.air.counters.connectionsEstablished == 0 && host.air.controller.initiating != nil)
    }

    @Test func connectionsFailAtTheConfiguredRate() {
        let phone = Self.phone(0, .heraldAndroid, from: 0, to: 10_000)
        var config = AirConfiguration(connectionFailure: 0.3)
        config.radio.advertLoss = 0
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: config))
        host.initialise()
        var failed = 0
        for _ in 0..<200 {
            let address = phone.rotation.address(at: host.air.now)
            _ = host.command(LECreateConnection(peerAddress: address, peerAddressType: .random))
            guard case .le(.connectionComplete(let c))? = host.wait(until: host.air.now + 5, for: {
                if case .le(.connectionComplete) = $0 { return true } else { return false }
            })?.event else { continue }
            if c.status == .connectionFailedToBeEstablished {
                failed += 1
            } else {
                _ = host.command(Disconnect(handle: c.handle))
                host.run(until: host.air.now + 1)
            }
        }
        #expect(failed > 40 && failed < 80)
    }

    @Test func aPhoneAsksForOtherParametersAndTheHostsResponderAnswers() throws {
        let phone = Self.phone(0, .heraldAndroid, from: 0, to: 300)
        var config = Self.noFailures
        config.parameterRequestChance = 1
        var host = ScriptedHost(Air(truth: Self.truth([phone]), configuration: config))
        host.initialise()
        host.run(until: 2)
        let handle = try #require(Self.connect(&host, to: phone))
        host.run(until: host.air.now + 2)
        var reassembler = ACLReassembler()
        let frames = host.acl.compactMap { entry -> L2CAPFrame? in
            if case .frame(let f) = reassembler.receive(entry.packet) { return f }
            return nil
        }
        let request = try #require(frames.first { $0.channel == .leSignalling })
        let response = L2CAPSignallingResponder.respond(to: request.payload, role: .central)
        let reply = try #require(response.reply)
        let update = try #require(response.connectionUpdate)
        for fragment in ACLFragmenter.fragment(handle: handle, channel: .leSignalling, payload: reply, maximumDataLength: 27) {
            host.air.send(H4Packet(type: .acl, body: Array(fragment.dropFirst())))
        }
        #expect(host.status(LEConnectionUpdate(handle: handle, parameters: update)) == .success)
        let updated = host.wait(until: host.air.now + 2) {
            if case .le(.connectionUpdateComplete) = $0 { return true } else { return false }
        }
        guard case .le(.connectionUpdateComplete(let u))? = updated?.event else {
            Issue.record("no LE Connection Update Complete")
            return
        }
        #expect(u.handle == handle && u.interval == update.intervalMax)
        #expect(host.air.counters.parameterRequests == 1 && host.air.counters.parameterResponses == 1)
    }

    @Test func theAirRepeatsForASeed() {
        let truth = VenueModel.generate(VenueConfiguration(visitors: 6, openingHours: 0.5, seed: 12))
        func trace() -> [H4Packet] {
            var air = Air(truth: truth)
            var all: [H4Packet] = []
            for c in [Reset().packet, SetEventMask().packet, LESetEventMask().packet, LESetScanEnable(true).packet] {
                air.send(H4Packet(type: .command, body: Array(c.dropFirst())))
            }
            while air.now < 1800 { all += air.advance(until: 1800) }
            return all
        }
        let a = trace()
        #expect(a.count > 1000)
        #expect(a == trace())
    }
}
