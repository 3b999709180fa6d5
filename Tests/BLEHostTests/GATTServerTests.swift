import Testing
@testable import BLEHost

/// The server against scripted request PDUs, BlueZ unit/test-gatt.c style: each request in hex,
/// the one response expected in hex ("" for none).
@Suite struct GATTServerTests {
    struct Harness {
        var connection: GATTConnection
        var database: GATTDatabase
        var events: [GATTConnection.Action] = []
        let now = ContinuousClock.now

        init(configuration: GATTServer.Configuration = .init()) throws {
            connection = GATTConnection(link: 0x0040, server: configuration)
            database = try Fixture.database()
        }

        /// Sends `request`, returns what was sent back (nil for nothing), keeps other actions.
        mutating func send(_ request: [UInt8]) -> [UInt8]? {
            var sent: [[UInt8]] = []
            for action in connection.receive(request[...], database: database, now: now, validateWrite: Fixture.validateSignal) {
                if case .send(let bytes) = action { sent.append(bytes) } else { events.append(action) }
            }
            #expect(sent.count <= 1, "at most one response per PDU")
            return sent.first
        }

        mutating func run(_ script: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation) {
            for (request, response) in script {
                let answer = send(h(request))
                #expect(
                    answer.map { Hex.encode($0) } ?? "" == Hex.encode(h(response)), "request \(request)",
                    sourceLocation: sourceLocation)
            }
        }
    }

    let uuid128 = Hex.encode(Fixture.testService.littleEndianBytes128)

    @Test func primaryServiceDiscoveryByGroupType() throws {
        var s = try Harness()
        s.run([
            ("10 0100 ffff 0028", "11 06 0100 0500 0018 0600 0900 0118 0a00 0e00 f6fc"),
            // The 128-bit service has another entry length: its own response.
            ("10 0f00 ffff 0028", "11 14 0f00 1300 \(uuid128)"),
            ("10 1400 ffff 0028", "01 10 1400 0a"),
            ("10 0100 ffff 0128", "01 10 0100 0a"),  // no secondary services
            ("10 0100 ffff 0328", "01 10 0100 10"),  // not a grouping type
            ("10 0000 ffff 0028", "01 10 0000 01"),
            ("10 0500 0100 0028", "01 10 0500 01"),
        ])
    }

    @Test func groupTypeResponseStopsWhenMTUFills() throws {
        var s = try Harness()
        // 2 + 3 × 6 = 20 bytes fit in 23; a fourth 16-bit service would not.
        let db = try GATTDatabase(
            deviceName: "x",
            services: (0..<3).map { GATTServiceDescription(uuid: BluetoothUUID(UInt16(0x180A + $0)), characteristics: []) })
        s.database = db
        s.run([
            ("10 0100 ffff 0028", "11 06 0100 0500 0018 0600 0900 0118 0a00 0a00 0a18"),
            ("10 0b00 ffff 0028", "11 06 0b00 0b00 0b18 0c00 0c00 0c18"),
        ])
    }

    @Test func primaryServiceDiscoveryByUUID() throws {
        var s = try Harness()
        s.run([
            ("06 0100 ffff 0028 f6fc", "07 0a00 0e00"),
            ("06 0100 ffff 0028 \(uuid128)", "07 0f00 1300"),
            ("06 0100 ffff 0028 0d18", "01 06 0100 0a"),
            ("06 0b00 ffff 0028 f6fc", "01 06 0b00 0a"),
            ("06 0000 ffff 0028 f6fc", "01 06 0000 01"),
            // Any type and value, not only services: the group end is the handle itself.
            ("06 0100 ffff 0329 4c6576656c", "01 06 0100 0a"),
            ("06 0100 ffff 0129 4c6576656c", "07 1300 1300"),
        ])
    }

    @Test func characteristicDiscovery() throws {
        var s = try Harness()
        let signal = Hex.encode(Fixture.signal.littleEndianBytes128)
        let payload = Hex.encode(Fixture.payload.littleEndianBytes128)
        s.run([
            ("08 0100 0500 0328", "09 07 0200 02 0300 002a 0400 02 0500 012a"),
            // 2 + 21 = 23: one 128-bit declaration per response at MTU 23.
            ("08 0a00 0e00 0328", "09 15 0b00 0c 0c00 \(signal)"),
            ("08 0c00 0e00 0328", "09 15 0d00 02 0e00 \(payload)"),
            ("08 0e00 0e00 0328", "01 08 0e00 0a"),
            ("08 0000 ffff 0328", "01 08 0000 01"),
            ("08 0200 0100 0328", "01 08 0200 01"),
        ])
    }

    @Test func readByTypeOfValues() throws {
        var s = try Harness()
        s.run([
            ("08 0100 ffff 002a", "09 07 0300 76656e7565"),
            // The first match is not readable: an error naming its handle.
            ("08 0100 ffff 052a", "01 08 0800 02"),
            ("08 0100 ffff 0229", "09 04 0900 0000 1200 0000"),
            ("08 0100 ffff 1111", "01 08 0100 0a"),
            ("08 0100 ffff \(Hex.encode(Fixture.payload.littleEndianBytes128))", "09 15 0e00 \(Hex.encode(Fixture.payloadBytes.prefix(19)))"),
        ])
    }

    @Test func readByTypeStopsAtFirstLengthChange() throws {
        var s = try Harness()
        s.database = try GATTDatabase(
            deviceName: "x",
            services: [
                GATTServiceDescription(uuid: BluetoothUUID(0x180F as UInt16), characteristics: [
                    .init(uuid: Fixture.level, properties: .read, value: .fixed([1])),
                    .init(uuid: Fixture.level, properties: .read, value: .fixed([2])),
                    .init(uuid: Fixture.level, properties: .read, value: .fixed([3, 3])),
                ])
            ])
        s.run([
            ("08 0100 ffff 192a", "09 03 0c00 01 0e00 02"),
            ("08 0f00 ffff 192a", "09 04 1000 0303"),
        ])
    }

    @Test func findInformation() throws {
        var s = try Harness()
        s.run([
            ("04 0800 0900", "05 01 0800 052a 0900 0229"),
            ("04 0c00 0c00", "05 02 0c00 \(Hex.encode(Fixture.signal.littleEndianBytes128))"),
            ("04 0b00 0d00", "05 01 0b00 0328"),  // stops where the UUID size changes
            ("04 0100 ffff", "05 01 0100 0028 0200 0328 0300 002a 0400 0328 0500 012a"),  // 2 + 5 × 4 ≤ 23
            ("04 1400 ffff", "01 04 1400 0a"),
            ("04 0000 0100", "01 04 0000 01"),
            ("04 0500 0100", "01 04 0500 01"),
        ])
    }

    @Test func readsAndBlobs() throws {
        var s = try Harness()
        let p = Fixture.payloadBytes
        s.run([
            ("0a 0300", "0b 76656e7565"),
            ("0a 0e00", "0b \(Hex.encode(p.prefix(22)))"),
            ("0c 0e00 1600", "0d \(Hex.encode(p[22..<44]))"),
            ("0c 0e00 8401", "0d \(Hex.encode(p[388..<400]))"),
            ("0c 0e00 9001", "0d"),  // offset == length: empty
            ("0c 0e00 9101", "01 0c 0e00 07"),
            ("0c 0300 0200", "0d 6e7565"),
            ("0c 0200 0000", "01 0c 0200 0b"),  // a declaration is never long
            ("0c 1200 0000", "01 0c 1200 0b"),  // nor a CCCD
            ("0a 0c00", "01 0a 0c00 02"),  // signal: write only
            ("0c 0c00 0000", "01 0c 0c00 02"),
            ("0a 0800", "01 0a 0800 02"),  // Service Changed
            ("0a 0000", "01 0a 0000 01"),
            ("0a 9900", "01 0a 9900 01"),
            ("0c 9900 0000", "01 0c 9900 01"),
            ("0e 0300 0500", "0f 76656e7565 0000"),
            ("0e 0300 0c00", "01 0e 0c00 02"),
            ("0e 0300 9900", "01 0e 9900 01"),
        ])
    }

    @Test func writesAndCCCD() throws {
        var s = try Harness()
        s.run([
            ("12 1200 0100", "13"),
            ("0a 1200", "0b 0100"),
            ("12 1200 01", "01 12 1200 0d"),
            ("12 1200 0200", "01 12 1200 fd"),  // indications not supported by this characteristic
            ("12 0900 0200", "13"),  // Service Changed: indications
            ("12 0e00 00", "01 12 0e00 03"),  // payload: read only
            ("12 0200 00", "01 12 0200 03"),
            ("12 9900 00", "01 12 9900 01"),
            ("12 0c00 020000", "13"),
            ("12 0c00 0201", "01 12 0c00 0d"),  // the validator rejects a short RSSI write
            ("52 0c00 02ffff", ""),
            ("52 0c00 02ff", ""),  // rejected and dropped silently
            ("52 9900 00", ""),
        ])
        let level = try #require(s.database.characteristic(valueHandle: 17))
        let signal = try #require(s.database.characteristic(valueHandle: 12))
        let serviceChanged = try #require(s.database.serviceChanged)
        #expect(s.events == [
            .subscriptionChanged(GATTSubscription(link: 0x40, characteristic: level, configuration: .notify)),
            .subscriptionChanged(GATTSubscription(link: 0x40, characteristic: serviceChanged, configuration: .indicate)),
            .write(GATTWrite(link: 0x40, characteristic: signal, value: [2, 0, 0], withResponse: true)),
            // The validator's refusals are reported (answered with 0x0D, or dropped for a command);
            // the database's own (read only, no such handle) are the peer's business alone.
            .writeRefused(GATTWrite(link: 0x40, characteristic: signal, value: [2, 1], withResponse: true), .invalidAttributeValueLength),
            .write(GATTWrite(link: 0x40, characteristic: signal, value: [2, 0xFF, 0xFF], withResponse: false)),
            .writeRefused(GATTWrite(link: 0x40, characteristic: signal, value: [2, 0xFF], withResponse: false), .invalidAttributeValueLength),
        ])
        #expect(s.connection.server.clientConfigurations == [17: .notify, 8: .indicate])
        let decoded = s.events.compactMap { action -> Int? in
            if case .write(let write) = action { return write.decoded as? Int }
            return nil
        }
        #expect(decoded == [0, -1], "what the validator decoded travels with the write")
    }

    @Test func preparedWrites() throws {
        var s = try Harness(configuration: .init(prepareQueueLimit: 3, prepareQueueByteLimit: 8))
        s.run([
            ("16 0c00 0000 0201", "17 0c00 0000 0201"),
            ("16 0c00 0200 00", "17 0c00 0200 00"),
            ("18 01", "19"),
            // Cancel discards.
            ("16 0c00 0000 0102", "17 0c00 0000 0102"),
            ("18 00", "19"),
            ("18 01", "19"),
            // Limits: three requests, eight bytes.
            ("16 0c00 0000 01", "17 0c00 0000 01"),
            ("16 0c00 0100 02", "17 0c00 0100 02"),
            ("16 0c00 0200 03", "17 0c00 0200 03"),
            ("16 0c00 0300 04", "01 16 0c00 09"),
            ("18 01", "19"),
            ("16 0c00 0000 0102030405060708", "17 0c00 0000 0102030405060708"),
            ("16 0c00 0800 09", "01 16 0c00 09"),
            ("18 00", "19"),
            // A gap in the offsets, a value the validator rejects, bad flags.
            ("16 0c00 0500 aa", "17 0c00 0500 aa"),
            ("18 01", "01 18 0c00 07"),
            ("16 0c00 0000 02", "17 0c00 0000 02"),
            ("18 01", "01 18 0c00 0d"),
            ("18 02", "01 18 0000 04"),
            ("16 0e00 0000 01", "01 16 0e00 03"),
            ("16 9900 0000 01", "01 16 9900 01"),
        ])
        let signal = try #require(s.database.characteristic(valueHandle: 12))
        #expect(s.events == [
            .write(GATTWrite(link: 0x40, characteristic: signal, value: [2, 1, 0], withResponse: true)),
            .write(GATTWrite(link: 0x40, characteristic: signal, value: [1, 2, 3], withResponse: true)),
            // The executed value the validator refused: nothing of the queue was applied.
            .writeRefused(GATTWrite(link: 0x40, characteristic: signal, value: [2], withResponse: true), .invalidAttributeValueLength),
        ])
    }

    @Test func exchangeMTU() throws {
        var s = try Harness(configuration: .init(rxMTU: 247))
        s.run([("02 0002", "03 f700")])
        #expect(s.connection.mtu == 247)
        var t = try Harness()
        t.run([("02 0a00", "03 0502")])
        #expect(t.connection.mtu == 23)
        var u = try Harness()
        u.run([("02 0002", "03 0502")])
        #expect(u.connection.mtu == 512)
        // A read at the new MTU returns up to 511 bytes: the whole 400-byte payload.
        #expect(u.send(h("0a 0e00")) == [0x0B] + Fixture.payloadBytes)
    }

    @Test func malformedAndUnknownPDUs() throws {
        var s = try Harness()
        s.run([
            ("0a 01", "01 0a 0000 04"),
            ("0a 010002", "01 0a 0000 04"),
            ("08 0100 ffff 00", "01 08 0000 04"),
            ("02", "01 02 0000 04"),
            ("10 0100 ffff 00280000", "01 10 0000 04"),
            ("18 0101", "01 18 0000 04"),
            ("3f 00", "01 3f 0000 06"),  // unknown request
            ("20 0300 0500", "01 20 0000 06"),  // Read Multiple Variable: not supported
            ("7f 0102", ""),  // unknown command
            ("d2 0c00 00 0102030405060708090a0b0c", ""),  // signed write: dropped
            ("52 01", ""),  // malformed command
            ("13", ""),  // a response nobody asked for
            ("1e", ""),  // a confirmation nobody asked for
            ("0b 00", ""),
            ("0a 0300", "0b 76656e7565"),  // and the server still works
        ])
        #expect(s.send([]) == nil)
        #expect(s.connection.bearer.counters.malformed == 8)
        #expect(s.connection.bearer.counters.unexpected == 3)
        #expect(s.connection.bearer.counters.ignored == 2)
        #expect(s.events.isEmpty)
    }

    @Test func notificationsOnlyToSubscribedLinks() throws {
        var s = try Harness()
        let level = try #require(s.database.characteristic(valueHandle: 17))
        #expect(s.connection.valueChanged(level, value: [42], now: s.now) == [])
        s.run([("12 1200 0100", "13")])
        #expect(s.connection.valueChanged(level, value: [42], now: s.now) == [.send(h("1b 1100 2a"))])
        // Cut to ATT_MTU − 3.
        let long = [UInt8](repeating: 7, count: 30)
        #expect(s.connection.valueChanged(level, value: long, now: s.now) == [.send([0x1B, 0x11, 0x00] + long.prefix(20))])
        s.run([("12 1200 0000", "13")])
        #expect(s.connection.valueChanged(level, value: [42], now: s.now) == [])
    }

    @Test func indicationsWaitForConfirmation() throws {
        var s = try Harness()
        let serviceChanged = try #require(s.database.serviceChanged)
        s.run([("12 0900 0200", "13")])
        #expect(s.connection.valueChanged(serviceChanged, value: h("0100ffff"), now: s.now) == [.send(h("1d 0800 0100ffff"))])
        #expect(s.connection.valueChanged(serviceChanged, value: h("0a000b00"), now: s.now) == [])
        #expect(s.connection.nextDeadline == s.now + .seconds(30))
        s.run([("1e", "1d 0800 0a000b00")])
        s.run([("1e", "")])
        #expect(s.connection.nextDeadline == nil)
    }
}
