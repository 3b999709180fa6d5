import Testing
@testable import BLEHost

/// Two data paths joined by a simulated controller pair: every ACL packet one side sends arrives
/// at the other (first-fragment flag rewritten as a controller does) and frees its buffer with a
/// Number Of Completed Packets.
@Suite struct LinkDataPathTests {
    static let now = ContinuousClock.now
    static let peripheralAddress = BluetoothAddress(rawValue: 0x00AA_0100_0042)
    static let centralAddress = BluetoothAddress(rawValue: 0x00AA_0101_0042)

    struct Air {
        var central = LinkDataPath(aclDataLength: 27, aclBufferCount: 1)
        var peripheral = LinkDataPath(aclDataLength: 27, aclBufferCount: 1)
        let database: GATTDatabase
        var events: [HostEvent] = []
        var finished: [(GATTProcedureID, Result<GATTClientResult, GATTClientError>)] = []
        var maxPacket = 0

        init() throws {
            database = try Fixture.database()
            central.opened(HostLink(handle: 1, peerAddress: LinkDataPathTests.peripheralAddress, peerAddressType: .public, role: .central))
            peripheral.opened(HostLink(handle: 2, peerAddress: LinkDataPathTests.centralAddress, peerAddressType: .public, role: .peripheral))
        }

        /// Carries outputs of one side to the other until nothing moves.
        mutating func run(_ outputs: [LinkDataPath.Output], fromCentral: Bool) {
            var pending: [(LinkDataPath.Output, Bool)] = outputs.map { ($0, fromCentral) }
            while !pending.isEmpty {
                let (output, isCentral) = pending.removeFirst()
                switch output {
                case .send(let packet):
                    maxPacket = max(maxPacket, packet.body.count - 4)
                    var body = packet.body
                    // Controller: rewrite the handle for the receiving side, PB 00 → 10.
                    let handle: UInt16 = isCentral ? 2 : 1
                    let pb = (body[1] >> 4) & 0b11 == 0 ? UInt8(0b10) : (body[1] >> 4) & 0b11
                    body[0] = UInt8(handle & 0xFF)
                    body[1] = UInt8(handle >> 8) | pb << 4
                    if isCentral {
                        pending += peripheral.receive(acl: body, database: database, validateWrite: { write, _ in Fixture.validateSignal(&write) }, now: LinkDataPathTests.now).map { ($0, false) }
                        pending += central.completed(1, handle: 1).map { ($0, true) }
                    } else {
                        pending += central.receive(acl: body, database: database, validateWrite: { write, _ in Fixture.validateSignal(&write) }, now: LinkDataPathTests.now).map { ($0, true) }
                        pending += peripheral.completed(1, handle: 2).map { ($0, false) }
                    }
                case .disconnect, .updateConnection, .useful: break
                case .event(let event): events.append(event)
                case .procedureFinished(_, let id, let result): finished.append((id, result))
                }
            }
        }
    }

    @Test func longReadThroughBlobsWithOneSmallBuffer() throws {
        var air = try Air()
        let started = air.central.start(.readCharacteristic(Fixture.payload, inService: Fixture.heraldService), link: 1, now: Self.now)
        let (id, outputs) = try #require(started)
        air.run(outputs, fromCentral: true)
        #expect(air.finished.count == 1)
        #expect(air.finished.first?.0 == id)
        #expect(air.finished.first?.1 == .success(.value(Fixture.payloadBytes)))
        #expect(air.maxPacket <= 27)
        #expect(air.central.flow.packetsInFlight == 0 && air.peripheral.flow.packetsInFlight == 0)
    }

    @Test func writesReachTheApplicationAndBadOnesGetTheATTError() throws {
        var air = try Air()
        let signal = try #require(air.database.characteristic(service: Fixture.heraldService, uuid: Fixture.signal))
        let ok = air.central.start(.write([0x02, 0x01, 0x02], to: signal.valueHandle), link: 1, now: Self.now)
        air.run(try #require(ok).1, fromCentral: true)
        let bad = air.central.start(.write([0x02, 0x01], to: signal.valueHandle), link: 1, now: Self.now)
        air.run(try #require(bad).1, fromCentral: true)
        air.run(try air.central.writeWithoutResponse([0x07, 0x08], to: signal.valueHandle, link: 1), fromCentral: true)
        #expect(air.finished.map(\.1) == [
            .success(.written),
            .failure(.att(.invalidAttributeValueLength, request: .writeRequest, handle: signal.valueHandle)),
        ])
        let writes = air.events.compactMap { if case .gattWrite(let w) = $0 { w } else { nil } }
        #expect(writes.map(\.value) == [[0x02, 0x01, 0x02], [0x07, 0x08]])
        #expect(writes.map(\.withResponse) == [true, false])
    }

    @Test func smpPairingIsRefusedAndSignallingUpdateAppliedAsCentral() throws {
        var path = LinkDataPath(aclDataLength: 27, aclBufferCount: 4)
        path.opened(HostLink(handle: 0x40, peerAddress: Self.peripheralAddress, peerAddressType: .random, role: .central))
        let database = try Fixture.database()
        // SMP Pairing Request on CID 6 (handle 0x40, PB 10).
        let smp = Hex.decode("4020 0b00 0700 0600 01030000100707")!
        let refused = path.receive(acl: smp, database: database, validateWrite: { _, _ in nil }, now: Self.now)
        #expect(refused.count == 1)
        if case .send(let packet)? = refused.first {
            #expect(Hex.encode(packet.body) == "4000" + "0600" + "0200" + "0600" + "0505")
        } else {
            Issue.record("no Pairing Failed")
        }
        // Connection Parameter Update Request (code 0x12, id 7): interval 24–40, latency 0, timeout 500.
        let update = Hex.decode("4020 1000 0c00 0500 12070800 1800 2800 0000 f401")!
        let outputs = path.receive(acl: update, database: database, validateWrite: { _, _ in nil }, now: Self.now)
        let sent = outputs.compactMap { if case .send(let p) = $0 { Hex.encode(p.body) } else { nil } }
        #expect(sent == ["4000" + "0a00" + "0600" + "0500" + "13070200" + "0000"])
        let updates = outputs.compactMap { if case .updateConnection(let link, let p) = $0 { (link, p) } else { nil } }
        #expect(updates.map(\.0) == [0x40])
        #expect(updates.first?.1 == LEConnectionParameters(intervalMin: 0x18, intervalMax: 0x28, latency: 0, supervisionTimeout: 0x1F4))
    }

    @Test func disconnectionFailsProceduresAndFreesBuffers() throws {
        var air = try Air()
        let started = air.central.start(.read(14), link: 1, now: Self.now)
        let (id, outputs) = try #require(started)
        #expect(outputs.count == 1)  // the Read Request, in flight
        #expect(air.central.flow.packetsInFlight == 1)
        let closed = air.central.closed(handle: 1, now: Self.now)
        #expect(closed.count == 1)
        if case .procedureFinished(_, let finishedID, let result)? = closed.first {
            #expect(finishedID == id)
            #expect(result == .failure(.closed))
        }
        #expect(air.central.flow.packetsInFlight == 0)
        let again = air.central.start(.read(14), link: 1, now: Self.now)
        #expect(again == nil)
    }

    @Test func malformedAndStrayACLIsCountedNotTrusted() throws {
        var path = LinkDataPath(aclDataLength: 27, aclBufferCount: 1)
        let database = try Fixture.database()
        path.opened(HostLink(handle: 1, peerAddress: Self.peripheralAddress, peerAddressType: .public, role: .peripheral))
        let inputs: [[UInt8]] = [
            [0x01],  // no header
            [0x01, 0x20, 0x05, 0x00, 0x01],  // length says 5, 1 present
            Hex.decode("0920 0500 0100 0400 0a")!,  // handle 9: no such link
            Hex.decode("0120 0500 0100 0900 0a")!,  // CID 9
            Hex.decode("0120 0400 0000 0400")!,  // empty ATT PDU
        ]
        for input in inputs {
            _ = path.receive(acl: input, database: database, validateWrite: { _, _ in nil }, now: Self.now)
        }
        #expect(path.counters.malformedACL == 2)
        #expect(path.counters.unknownHandle == 1)
        #expect(path.counters.unknownChannel == 1)
    }
}
