import Testing
@testable import BLEHost

@Suite struct LinkManagerTests {
    let phone = BluetoothAddress("5A:11:22:33:44:55")!
    let other = BluetoothAddress("6B:11:22:33:44:66")!
    let scan = LESetScanParameters(type: .passive, interval: 0x0012, window: 0x0012)

    var advertising: AdvertisingConfiguration {
        get throws {
            var builder = AdvertisingDataBuilder()
            builder.appendFlags(.generalDiscoverableLEOnly)
            builder.appendServiceUUIDs([BluetoothUUID(0xFCF6 as UInt16)])
            return AdvertisingConfiguration(data: try builder.build())
        }
    }

    static let scanSequence: [HCIOpcode] = [.leSetScanEnable, .leSetScanParameters, .leSetScanEnable]
    static let advertisingSequence: [HCIOpcode] = [
        .leSetAdvertisingEnable, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
    ]

    func opened(_ actions: [LinkManager.Action]) -> [LELink] {
        actions.compactMap { if case .connectionOpened(let link) = $0 { return link } else { return nil } }
    }

    func resets(_ actions: [LinkManager.Action]) -> [LinkManager.ResetReason] {
        actions.compactMap { if case .resetController(let reason) = $0 { return reason } else { return nil } }
    }

    // MARK: Init, advertising, scanning

    @Test func startRunsInitThenAppliesTheDesiredState() throws {
        var h = LinkHarness()
        let advertising = try advertising
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.perform { $0.setAdvertising(advertising, now: $1, into: &$2) }
        #expect(h.sent.isEmpty)  // nothing before the controller is up
        h.perform { $0.start(now: $1, into: &$2) }
        #expect(Array(h.sent.prefix(9)) == [
            .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .setEventMask, .leSetEventMask, .readBDAddr,
            .leReadBufferSize, .leReadLocalSupportedFeatures, .leReadSupportedStates,
        ])
        #expect(Array(h.sent.dropFirst(9)) == Self.scanSequence + Self.advertisingSequence)
        guard case .ready(let info) = h.reported.first else { Issue.record("\(h.reported)"); return }
        #expect(info.aclDataLength == 192)
        #expect(h.manager.isScanning && h.manager.isAdvertising)
        #expect(h.controller.scanning && h.controller.advertising)
        // Duplicate filtering off, and no command failure reported for the benign 0x0C.
        let enable = try #require(h.controller.received.last { $0.opcode == .leSetScanEnable })
        #expect(enable.parameters == [0x01, 0x00])
        #expect(!h.reported.contains { if case .commandFailed = $0 { return true } else { return false } })
    }

    @Test func advertisingChangeRunsTheWholeSequence() throws {
        var h = LinkHarness.ready()
        h.perform { $0.setAdvertising(try? advertising, now: $1, into: &$2) }
        h.clear()
        var changed = try advertising
        changed.scanResponse = try AdvertisingPayload(hexBytes("06 09 56 65 6e 75 65"))
        h.perform { $0.setAdvertising(changed, now: $1, into: &$2) }
        #expect(h.sent == Self.advertisingSequence)
        let response = try #require(h.controller.received.last { $0.opcode == .leSetScanResponseData })
        #expect(Array(response.parameters.prefix(8)) == hexBytes("07 06 09 56 65 6e 75 65"))
        // The same configuration again changes nothing.
        h.clear()
        h.perform { $0.setAdvertising(changed, now: $1, into: &$2) }
        #expect(h.sent.isEmpty)
        // Stopping sends one disable.
        h.perform { $0.setAdvertising(nil, now: $1, into: &$2) }
        #expect(h.sent == [.leSetAdvertisingEnable] && !h.controller.advertising && !h.manager.isAdvertising)
    }

    @Test func scanningChangeRunsDisableParametersEnable() {
        var h = LinkHarness.ready()
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.perform { $0.setScanning(LESetScanParameters(type: .active, interval: 0x0060, window: 0x0030), now: $1, into: &$2) }
        #expect(h.sent == Self.scanSequence)
        #expect(h.controller.received.last { $0.opcode == .leSetScanParameters }?.parameters == hexBytes("01 60 00 30 00 00 00"))
        h.clear()
        h.perform { $0.setScanning(nil, now: $1, into: &$2) }
        #expect(h.sent == [.leSetScanEnable] && !h.controller.scanning)
    }

    @Test func enableThatTheControllerCallsDisallowedCountsAsEnabled() {
        var h = LinkHarness.ready()
        // The controller already scans (another host left it on; btvirt answers 0x0C to enable),
        // and refuses to disable an off scan too: both are benign.
        h.controller.forced[.leSetScanEnable] = .commandDisallowed
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        #expect(h.sent == Self.scanSequence)
        #expect(h.manager.isScanning)
        #expect(!h.reported.contains { if case .commandFailed = $0 { return true } else { return false } })
    }

    @Test func parametersRefusedWhileEnabledDisableFirstThenRetry() {
        var h = LinkHarness.ready(LinkManager.Configuration(retryDelay: .seconds(1)))
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.controller.forced[.leSetScanParameters] = .invalidParameters
        h.clear()
        h.perform { $0.setScanning(LESetScanParameters(interval: 0x4001, window: 0x4001), now: $1, into: &$2) }
        #expect(h.sent == [.leSetScanEnable, .leSetScanParameters])
        #expect(h.reported == [.commandFailed(.leSetScanParameters, .invalidParameters)])
        // Retried after the delay, then after twice the delay.
        h.clear()
        h.advance(.milliseconds(999))
        #expect(h.sent.isEmpty)
        h.advance(.milliseconds(1))
        #expect(h.sent == [.leSetScanEnable, .leSetScanParameters])
        h.clear()
        h.advance(.milliseconds(1999))
        #expect(h.sent.isEmpty)
        h.controller.forced[.leSetScanParameters] = nil
        h.advance(.milliseconds(1))
        #expect(h.sent == Self.scanSequence)
        #expect(h.manager.isScanning)
    }

    @Test func randomAddressIsSetFirst() throws {
        let address = try #require(BluetoothAddress("C0:55:44:33:22:11"))
        var h = LinkHarness(LinkManager.Configuration(randomAddress: address))
        h.perform { $0.setScanning(LESetScanParameters(ownAddressType: .random), now: $1, into: &$2) }
        h.perform { $0.start(now: $1, into: &$2) }
        let afterInit = Array(h.sent.drop { $0 != .leReadSupportedStates }.dropFirst())
        #expect(afterInit == [.leSetRandomAddress] + Self.scanSequence)
        #expect(h.controller.received.first { $0.opcode == .leSetRandomAddress }?.parameters == address.littleEndianBytes)
        #expect(h.manager.configuration.ownAddressType == .random)
    }

    @Test func advertisingReportsAreDelivered() throws {
        var h = LinkHarness.ready()
        h.inject(hexBytes("3e 19 02 02 00 01 66 55 44 33 22 11 03 02 01 06 c4 04 00 42 00 00 01 aa 00 00 7f"))
        guard case .advertisingReports(let reports) = h.reported.first else { Issue.record("\(h.reported)"); return }
        #expect(reports.count == 2)
    }

    // MARK: Connecting

    @Test func connectStopsScanningConnectsAndRestartsScanning() throws {
        var h = LinkHarness.ready()
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.sent == [.leSetScanEnable, .leCreateConnection] + Self.scanSequence)
        let create = try #require(h.controller.received.first { $0.opcode == .leCreateConnection })
        #expect(create.parameters[5] == AddressType.random.rawValue)
        #expect(Array(create.parameters[6..<12]) == phone.littleEndianBytes)
        let links = opened(h.reported)
        #expect(links.map(\.role) == [.central] && links.map(\.peerAddress) == [phone] && links.map(\.handle) == [0x40])
        #expect(h.manager.links[0x40]?.peerAddressType == .random)
        #expect(h.manager.isScanning && !h.manager.isInitiating)
    }

    @Test func aControllerThatScansWhileInitiatingKeepsScanning() throws {
        var controller = FakeController()
        controller.supportedStates = FakeController.statesWithScanningWhileInitiating
        controller.initiatesWhileScanning = true
        var h = LinkHarness.ready(controller: controller)
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        // No scan disable before the attempt; the new link re-asserts scanning as always.
        #expect(h.sent == [.leCreateConnection] + Self.scanSequence)
        #expect(opened(h.reported).map(\.peerAddress) == [phone])
        #expect(h.manager.isScanning && !h.manager.isInitiating)
    }

    @Test func aControllerThatListsButRefusesScanningWhileInitiatingIsAskedWithScanningOff() throws {
        var controller = FakeController()
        controller.supportedStates = FakeController.statesWithScanningWhileInitiating
        var h = LinkHarness.ready(controller: controller)
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        // Refused (0x0C) while scanning: the same attempt again with scanning off, not a failure.
        #expect(h.sent == [.leCreateConnection, .leSetScanEnable, .leCreateConnection] + Self.scanSequence)
        #expect(opened(h.reported).map(\.peerAddress) == [phone])
        #expect(!h.reported.contains { if case .connectionFailed = $0 { return true } else { return false } })
        // From then on scanning stops for every attempt.
        h.clear()
        h.controller.connectBehaviour = .connect(handle: 0x41)
        h.perform { $0.connect(to: other, addressType: .random, now: $1, into: &$2) }
        #expect(h.sent == [.leSetScanEnable, .leCreateConnection] + Self.scanSequence)
    }

    @Test func connectTimesOutCancelsAndRestartsScanning() {
        var h = LinkHarness.ready()
        h.controller.connectBehaviour = .never
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.sent == [.leSetScanEnable, .leCreateConnection])
        #expect(h.manager.isInitiating && !h.manager.isScanning)
        #expect(h.manager.nextDeadline != nil)
        h.clear()
        h.advance(.seconds(11))
        #expect(h.sent.isEmpty)
        h.advance(.seconds(1))
        #expect(h.sent == [.leCreateConnectionCancel] + Self.scanSequence)
        // The controller answers the cancel with 0x02; the attempt is reported as what it is.
        #expect(h.reported == [.connectionFailed(peer: phone, addressType: .random, status: .connectionTimeout)])
        #expect(h.manager.isScanning && !h.manager.isInitiating)
    }

    @Test func cancelThatBtvirtRefusesStillEndsTheAttempt() {
        var h = LinkHarness.ready(LinkManager.Configuration(commandTimeout: .seconds(3), connectTimeout: .seconds(5)))
        h.controller.connectBehaviour = .never
        h.controller.cancelBehaviour = .disallowed
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.perform { $0.connect(to: phone, addressType: .public, now: $1, into: &$2) }
        h.clear()
        h.advance(.seconds(5))
        #expect(h.sent == [.leCreateConnectionCancel])
        #expect(h.reported.isEmpty)  // 0x0C on cancel: not a failure worth reporting, wait for the event
        h.controller.initiating = nil
        h.advance(.seconds(3))
        #expect(h.reported == [.connectionFailed(peer: phone, addressType: .public, status: .connectionTimeout)])
        #expect(h.sent.suffix(3) == ArraySlice(Self.scanSequence))
        #expect(resets(h.reported).isEmpty)
    }

    @Test func failedToEstablishIsReported() {
        var h = LinkHarness.ready()
        h.controller.connectBehaviour = .fail(.connectionFailedToBeEstablished)
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.reported == [.connectionFailed(peer: phone, addressType: .random, status: .connectionFailedToBeEstablished)])
        #expect(h.sent == [.leSetScanEnable, .leCreateConnection] + Self.scanSequence)
        #expect(h.manager.isScanning)
    }

    @Test func refusedCreateConnectionEndsTheAttempt() {
        var h = LinkHarness.ready()
        h.controller.forced[.leCreateConnection] = .commandDisallowed
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.reported == [
            .commandFailed(.leCreateConnection, .commandDisallowed),
            .connectionFailed(peer: phone, addressType: .random, status: .commandDisallowed),
        ])
        #expect(!h.manager.isInitiating)
    }

    @Test func attemptsRunOneAtATime() {
        var h = LinkHarness.ready()
        h.controller.connectBehaviour = .never
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        h.perform { $0.connect(to: other, addressType: .public, now: $1, into: &$2) }
        h.perform { $0.connect(to: other, addressType: .public, now: $1, into: &$2) }  // already queued: ignored
        #expect(h.sent.filter { $0 == .leCreateConnection }.count == 1)
        // The first peer connects; the second attempt starts.
        h.controller.initiating = nil
        h.controller.connectBehaviour = .connect(handle: 0x41)
        h.inject(FakeController.connectionComplete(handle: 0x40, role: .central, peer: phone, type: .random))
        #expect(opened(h.reported).map(\.peerAddress) == [phone, other])
        #expect(h.manager.links.count == 2)
        // Connecting to a connected peer fails at once.
        h.clear()
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.reported == [.connectionFailed(peer: phone, addressType: .random, status: .connectionAlreadyExists)])
    }

    /// Each attempt has one deadline, the caller's, whether it is still queued behind another
    /// or running: a queued one that expires fails without ever reaching the controller.
    @Test func eachAttemptHasItsOwnDeadlineQueuedOrRunning() {
        var h = LinkHarness.ready()
        h.controller.connectBehaviour = .never
        h.perform { $0.connect(to: phone, addressType: .random, timeout: .seconds(5), now: $1, into: &$2) }
        h.perform { $0.connect(to: other, addressType: .random, timeout: .seconds(3), now: $1, into: &$2) }
        h.clear()
        h.advance(.seconds(2))
        #expect(h.reported.isEmpty && h.sent.isEmpty)
        h.advance(.seconds(1))
        #expect(h.reported == [.connectionFailed(peer: other, addressType: .random, status: .connectionTimeout)])
        #expect(h.sent.isEmpty)  // it never reached the controller
        h.clear()
        h.advance(.seconds(2))
        #expect(h.sent == [.leCreateConnectionCancel])
        #expect(h.reported == [.connectionFailed(peer: phone, addressType: .random, status: .connectionTimeout)])
        #expect(!h.manager.isInitiating && h.manager.nextDeadline.map { $0 > h.now } ?? true)
    }

    @Test func connectionCapRefusesNewAttempts() {
        var h = LinkHarness.ready(LinkManager.Configuration(maximumConnections: 1))
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.manager.links.count == 1)
        h.clear()
        h.perform { $0.connect(to: other, addressType: .random, now: $1, into: &$2) }
        #expect(h.reported == [.connectionFailed(peer: other, addressType: .random, status: .connectionLimitExceeded)])
        #expect(h.sent.isEmpty)
    }

    // MARK: Peripheral links and advertising

    @Test func advertisingResumesAfterAPeripheralLinkOpensAndCloses() throws {
        var h = LinkHarness.ready()
        let advertising = try advertising
        h.perform { $0.setAdvertising(advertising, now: $1, into: &$2) }
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        #expect(opened(h.reported).map(\.role) == [.peripheral])
        // Scanning re-asserted, advertising enabled again (only the enable: nothing changed).
        #expect(h.sent == Self.scanSequence + [.leSetAdvertisingEnable])
        #expect(h.controller.advertising && h.manager.isAdvertising)
        let link = try #require(h.manager.links[0x41])
        h.clear()
        h.perform { $0.disconnect(handle: 0x41, now: $1, into: &$2) }
        #expect(h.reported == [.connectionClosed(link, reason: .localHostTerminated)])
        #expect(h.sent == [.disconnect] + Self.scanSequence)
        #expect(h.manager.links.isEmpty)
    }

    // MARK: Links

    @Test func linkEventsAndCommands() throws {
        var h = LinkHarness.ready()
        h.inject(h.controller.peerConnects(handle: 0x42, peer: phone))
        h.clear()
        let parameters = LEConnectionParameters(intervalMin: 0x0010, intervalMax: 0x0020, latency: 0, supervisionTimeout: 0x0100)
        h.perform { $0.updateConnection(handle: 0x42, parameters: parameters, now: $1, into: &$2) }
        #expect(h.sent == [.leConnectionUpdate])
        guard case .connectionUpdated(let link) = h.reported.last else { Issue.record("\(h.reported)"); return }
        #expect(link.interval == 0x0010 && link.supervisionTimeout == 0x0100)
        // The peer asks to encrypt: no keys here.
        h.clear()
        h.inject(hexBytes("3e 0d 05 42 00 01 02 03 04 05 06 07 08 34 12"))
        #expect(h.sent == [.leLongTermKeyRequestNegativeReply])
        #expect(h.reported.isEmpty)
        // Any other command goes through the queue with a token.
        h.clear()
        var token: HCICommandQueue.Token?
        h.perform { token = $0.send(ReadRSSI(handle: 0x42).commandPacket, now: $1, into: &$2) }
        guard case .commandResult(let t, .readRSSI, let result) = h.reported.first else { Issue.record("\(h.reported)"); return }
        #expect(t == token)
        #expect(try ReadRSSI.decodeReturn(result).rssi == -60)
    }

    @Test func disconnectOfAnUnknownLinkIsReportedClosed() {
        var h = LinkHarness.ready()
        h.inject(h.controller.peerConnects(handle: 0x43, peer: phone))
        h.controller.forced[.disconnect] = .unknownConnectionIdentifier
        h.clear()
        h.perform { $0.disconnect(handle: 0x43, now: $1, into: &$2) }
        #expect(h.reported.count == 2)
        guard case .connectionClosed(let link, .unknownConnectionIdentifier) = h.reported.last else { Issue.record("\(h.reported)"); return }
        #expect(link.handle == 0x43 && h.manager.links.isEmpty)
    }
}
