import Testing
@testable import BLEHost

/// A GATT client and a GATT server connected in memory through two bearers (PureSwift
/// GATTClientServerTests style): every PDU one side sends is delivered to the other.
@Suite struct GATTClientServerTests {
    struct Link {
        var client = GATTConnection(link: 1)
        var server: GATTConnection
        var database: GATTDatabase
        var now = ContinuousClock.now
        /// Everything either side did other than sending PDUs.
        var clientActions: [GATTConnection.Action] = []
        var serverActions: [GATTConnection.Action] = []
        /// Every PDU the client sent, to count requests by opcode.
        var clientPDUs: [[UInt8]] = []
        private var toServer: [[UInt8]] = []
        private var toClient: [[UInt8]] = []

        init(serverMTU: Int = ATTBearer.maximumMTU, database: GATTDatabase? = nil) throws {
            server = GATTConnection(link: 2, server: .init(rxMTU: serverMTU))
            self.database = try database ?? Fixture.database()
        }

        /// Runs a procedure on the client to completion.
        mutating func run(_ procedure: GATTClientProcedure) -> Result<GATTClientResult, GATTClientError>? {
            let (id, actions) = client.start(procedure, now: now)
            take(actions, fromClient: true)
            pump()
            for case .procedureFinished(id, let result) in clientActions { return result }
            return nil
        }

        mutating func take(_ actions: [GATTConnection.Action], fromClient: Bool) {
            for action in actions {
                switch (action, fromClient) {
                case (.send(let bytes), true):
                    clientPDUs.append(bytes)
                    toServer.append(bytes)
                case (.send(let bytes), false): toClient.append(bytes)
                case (_, true): clientActions.append(action)
                case (_, false): serverActions.append(action)
                }
            }
        }

        mutating func pump() {
            while !toServer.isEmpty || !toClient.isEmpty {
                if !toServer.isEmpty {
                    let pdu = toServer.removeFirst()
                    take(server.receive(pdu[...], database: database, now: now, validateWrite: Fixture.validateSignal), fromClient: false)
                }
                if !toClient.isEmpty {
                    let pdu = toClient.removeFirst()
                    take(client.receive(pdu[...], database: database, now: now), fromClient: true)
                }
            }
        }

        func count(_ opcode: ATTOpcode) -> Int { clientPDUs.filter { $0.first == opcode.rawValue }.count }
    }

    @Test func discoverAndReadLongValueAtMTU23() throws {
        var link = try Link()
        let result = link.run(.readCharacteristic(Fixture.payload, inService: Fixture.heraldService))
        #expect(result == .success(.value(Fixture.payloadBytes)))
        #expect(link.count(.findByTypeValueRequest) == 1)
        #expect(link.count(.readRequest) == 1)
        #expect(link.count(.readBlobRequest) == 18)  // 22 + 18 parts of up to 22 bytes
        #expect(link.client.mtu == 23)
    }

    @Test func discoverAndReadLongValueAtMTU517() throws {
        var link = try Link()
        #expect(link.run(.exchangeMTU(clientRxMTU: 517)) == .success(.mtu(517)))
        #expect(link.client.mtu == 517 && link.server.mtu == 517)
        let result = link.run(.readCharacteristic(Fixture.payload, inService: Fixture.heraldService))
        #expect(result == .success(.value(Fixture.payloadBytes)))
        #expect(link.count(.readBlobRequest) == 0)
    }

    @Test func longReadEndingExactlyOnAFullPart() throws {
        var link = try Link(serverMTU: 100)
        _ = link.run(.exchangeMTU())
        #expect(link.client.mtu == 100)
        let value = (0..<198).map { UInt8($0) }
        try link.database.setValue(value, forCharacteristic: 14)
        #expect(link.run(.read(14)) == .success(.value(value)))
        #expect(link.count(.readBlobRequest) == 2)  // the second returns nothing
    }

    /// One composite procedure: the MTU, then per group the first service the peer has and its
    /// characteristics; a group the peer has none of is left out, not a failure.
    @Test func compositeDiscoveryFindsTheFirstAlternativeOfEachGroup() throws {
        var link = try Link()
        let heartRate = BluetoothUUID(0x180D as UInt16), battery = BluetoothUUID(0x180F as UInt16)
        let result = link.run(.discover([[heartRate, Fixture.heraldService], [Fixture.testService], [battery]]))
        guard case .success(.discovered(let found)) = result else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(found.mtu == 517 && link.client.mtu == 517)
        #expect(found.services.map(\.service.uuid) == [Fixture.heraldService, Fixture.testService])
        let herald = try #require(found.service(Fixture.heraldService))
        #expect(herald.service == GATTDiscoveredService(uuid: Fixture.heraldService, startHandle: 10, endHandle: 14))
        #expect(herald.valueHandle(of: Fixture.payload) == 14 && herald.valueHandle(of: Fixture.signal) == 12)
        #expect(found.service(heartRate) == nil && found.service(battery) == nil)
        #expect(link.count(.exchangeMTURequest) == 1)
        // Heart rate (absent), Herald, the test service, battery (absent): one request each.
        #expect(link.count(.findByTypeValueRequest) == 4)

        // Without the exchange it talks at 23 bytes; nothing found is an empty success.
        var plain = try Link()
        #expect(plain.run(.discover([[battery]], exchangingMTU: false)) == .success(.discovered(GATTDiscovery(mtu: 23, services: []))))
        #expect(plain.count(.exchangeMTURequest) == 0)
        #expect(plain.run(.discover([], exchangingMTU: false)) == .success(.discovered(GATTDiscovery(mtu: 23, services: []))))
        #expect(plain.count(.findByTypeValueRequest) == 1)
    }

    @Test func discoveryResults() throws {
        var link = try Link()
        #expect(link.run(.discoverAllPrimaryServices()) == .success(.services([
            .init(uuid: GATTUUID.genericAccessService, startHandle: 1, endHandle: 5),
            .init(uuid: GATTUUID.genericAttributeService, startHandle: 6, endHandle: 9),
            .init(uuid: Fixture.heraldService, startHandle: 10, endHandle: 14),
            .init(uuid: Fixture.testService, startHandle: 15, endHandle: 19),
        ])))
        #expect(link.run(.discoverPrimaryService(Fixture.testService)) == .success(.services([
            .init(uuid: Fixture.testService, startHandle: 15, endHandle: 19)
        ])))
        #expect(link.run(.discoverPrimaryService(BluetoothUUID(0x180D as UInt16))) == .failure(.serviceNotFound(BluetoothUUID(0x180D as UInt16))))
        #expect(link.run(.discoverCharacteristics(from: 10, through: 14)) == .success(.characteristics([
            .init(uuid: Fixture.signal, properties: [.write, .writeWithoutResponse], declarationHandle: 11, valueHandle: 12),
            .init(uuid: Fixture.payload, properties: .read, declarationHandle: 13, valueHandle: 14),
        ])))
        #expect(link.run(.discoverDescriptors(from: 18, through: 19)) == .success(.descriptors([
            .init(handle: 18, uuid: GATTUUID.clientCharacteristicConfiguration),
            .init(handle: 19, uuid: GATTUUID.characteristicUserDescription),
        ])))
        #expect(link.run(.readCharacteristic(Fixture.level, inService: Fixture.heraldService)) == .failure(.characteristicNotFound(Fixture.level)))
    }

    @Test func writesWithAndWithoutResponse() throws {
        var link = try Link()
        let signal = try #require(link.database.characteristic(valueHandle: 12))
        #expect(link.run(.writeCharacteristic(Fixture.signal, inService: Fixture.heraldService, value: [2, 0xC4, 0xFF])) == .success(.written))
        // Long write at MTU 23: prepared parts of 18 bytes, then execute.
        let payload = [UInt8](repeating: 0x30, count: 100)
        #expect(link.run(.write([0x01, 100, 0] + payload, to: 12)) == .success(.written))
        #expect(link.count(.prepareWriteRequest) == 6 && link.count(.executeWriteRequest) == 1)
        link.take(try link.client.writeWithoutResponse([2, 0xC0, 0xFF], to: 12), fromClient: true)
        link.pump()
        #expect(throws: GATTClientError.valueTooLong(21)) { try link.client.writeWithoutResponse([UInt8](repeating: 0, count: 21), to: 12) }
        #expect(link.serverActions == [
            .write(GATTWrite(link: 2, characteristic: signal, value: [2, 0xC4, 0xFF], withResponse: true)),
            .write(GATTWrite(link: 2, characteristic: signal, value: [0x01, 100, 0] + payload, withResponse: true)),
            .write(GATTWrite(link: 2, characteristic: signal, value: [2, 0xC0, 0xFF], withResponse: false)),
        ])
    }

    @Test func writeRejectedByTheValidator() throws {
        var link = try Link()
        #expect(link.run(.writeCharacteristic(Fixture.signal, inService: Fixture.heraldService, value: [2, 0xC4])) ==
            .failure(.att(.invalidAttributeValueLength, request: .writeRequest, handle: 12)))
        // A rejected long write: the prepared parts are discarded on the server.
        let bad = [UInt8](repeating: 2, count: 40)
        #expect(link.run(.write(bad, to: 12)) == .failure(.att(.invalidAttributeValueLength, request: .executeWriteRequest, handle: 12)))
        #expect(link.run(.write([1], to: 14)) == .failure(.att(.writeNotPermitted, request: .writeRequest, handle: 14)))
        // Nothing was written; the application hears of the validator's two refusals (not of
        // the database's own).
        let signal = try #require(link.database.characteristic(valueHandle: 12))
        #expect(link.serverActions == [
            .writeRefused(GATTWrite(link: 2, characteristic: signal, value: [2, 0xC4], withResponse: true), .invalidAttributeValueLength),
            .writeRefused(GATTWrite(link: 2, characteristic: signal, value: bad, withResponse: true), .invalidAttributeValueLength),
        ])
    }

    @Test func notificationToASubscribedClient() throws {
        var link = try Link()
        guard case .success(.characteristics(let characteristics)) = link.run(.discoverCharacteristics(from: 15, through: 19)),
            let level = characteristics.first
        else {
            Issue.record("no characteristic")
            return
        }
        #expect(link.run(.subscribe(valueHandle: level.valueHandle, endHandle: 19)) == .success(.written))
        let local = try #require(link.database.characteristic(valueHandle: 17))
        #expect(link.serverActions == [.subscriptionChanged(GATTSubscription(link: 2, characteristic: local, configuration: .notify))])
        link.take(link.server.valueChanged(local, value: [55], now: link.now), fromClient: false)
        link.pump()
        #expect(link.clientActions.last == .notification(handle: 17, value: [55]))
        #expect(link.run(.subscribe(valueHandle: 14, endHandle: 14)) == .failure(.descriptorNotFound(GATTUUID.clientCharacteristicConfiguration)))
        // With the end unknown, the search stops at the next declaration instead of taking
        // another characteristic's CCCD.
        #expect(link.run(.subscribe(valueHandle: 12, endHandle: 0xFFFF)) == .failure(.descriptorNotFound(GATTUUID.clientCharacteristicConfiguration)))
        #expect(link.run(.subscribe(valueHandle: 17, endHandle: 0xFFFF, configuration: [])) == .success(.written))
        #expect(link.serverActions.last == .subscriptionChanged(GATTSubscription(link: 2, characteristic: local, configuration: [])))
    }

    @Test func indicationIsConfirmedByTheClient() throws {
        var link = try Link()
        #expect(link.run(.subscribe(valueHandle: 8, endHandle: 9, configuration: .indicate)) == .success(.written))
        let serviceChanged = try #require(link.database.serviceChanged)
        link.take(link.server.valueChanged(serviceChanged, value: h("0100ffff"), now: link.now), fromClient: false)
        #expect(link.server.nextDeadline != nil)
        link.pump()
        #expect(link.clientActions.last == .indication(handle: 8, value: h("0100ffff")))
        #expect(link.server.nextDeadline == nil)
    }

    @Test func transactionTimeout() throws {
        var link = try Link()
        let (id, actions) = link.client.start(.read(3), now: link.now)
        #expect(actions == [.send(h("0a 0300"))])
        #expect(link.client.tick(now: link.now + .seconds(29)) == [])
        #expect(link.client.tick(now: link.now + .seconds(30)) == [.procedureFinished(id, .failure(.timedOut)), .disconnect])
        let (next, more) = link.client.start(.read(3), now: link.now + .seconds(31))
        #expect(more == [.procedureFinished(next, .failure(.closed))])
    }

    @Test func closeFinishesRunningProcedures() throws {
        var link = try Link()
        let (id, _) = link.client.start(.read(3), now: link.now)
        let (queued, _) = link.client.start(.read(5), now: link.now)
        #expect(link.client.close(now: link.now) == [
            .procedureFinished(id, .failure(.closed)), .procedureFinished(queued, .failure(.closed)),
        ])
    }

    @Test func serviceDiscoveryFallsBackToGroupType() throws {
        // A scripted server that does not support Find By Type Value.
        var client = GATTConnection(link: 1)
        let db = try Fixture.database()
        let now = ContinuousClock.now
        let (id, first) = client.start(.discoverPrimaryService(Fixture.testService), now: now)
        #expect(first == [.send(h("06 0100 ffff 0028") + Fixture.testService.littleEndianBytes128)])
        #expect(client.receive(h("01 06 0100 06")[...], database: db, now: now) == [.send(h("10 0100 ffff 0028"))])
        #expect(client.receive(h("11 06 0100 0500 0018 0600 0900 0118")[...], database: db, now: now) == [.send(h("10 0a00 ffff 0028"))])
        #expect(client.receive((h("11 14 0a00 0f00") + Fixture.testService.littleEndianBytes128)[...], database: db, now: now) == [
            .procedureFinished(id, .success(.services([.init(uuid: Fixture.testService, startHandle: 10, endHandle: 15)])))
        ])
    }

    @Test func hostileServerResponsesEndTheProcedure() throws {
        var client = GATTConnection(link: 1)
        let db = try Fixture.database()
        let now = ContinuousClock.now
        // Characteristic discovery whose handles go backwards.
        let (a, _) = client.start(.discoverCharacteristics(from: 10, through: 20), now: now)
        #expect(client.receive(h("09 07 0500 02 0600 192a")[...], database: db, now: now) == [
            .procedureFinished(a, .failure(.invalidResponse("characteristic declaration")))
        ])
        // A long read that never ends stops at 512 bytes.
        let (b, _) = client.start(.read(3), now: now)
        var result: GATTConnection.Action? = nil
        for _ in 0..<40 {
            let actions = client.receive(([0x0B] + [UInt8](repeating: 1, count: 22))[...], database: db, now: now)
            let blob = client.receive(([0x0D] + [UInt8](repeating: 1, count: 22))[...], database: db, now: now)
            if let last = (actions + blob).last, case .procedureFinished = last { result = last; break }
        }
        #expect(result == .procedureFinished(b, .success(.value([UInt8](repeating: 1, count: 512)))))
        // A prepared write echoed wrongly is cancelled.
        let (c, first) = client.start(.write([UInt8](repeating: 9, count: 30), to: 12), now: now)
        #expect(first == [.send(h("16 0c00 0000") + [UInt8](repeating: 9, count: 18))])
        #expect(client.receive((h("17 0c00 0000") + [UInt8](repeating: 8, count: 18))[...], database: db, now: now) == [.send(h("18 00"))])
        #expect(client.receive(h("19")[...], database: db, now: now) == [
            .procedureFinished(c, .failure(.invalidResponse("prepared write echoed wrongly")))
        ])
    }
}
