import Testing
@testable import Replication

@Suite struct WireFormatTests {
    static func visit(_ id: Int64, change: Int64, open: Bool = false) -> ReplicatedVisit {
        ReplicatedVisit(
            visitID: id, change: change, kind: id % 2 == 0 ? .gaen : .herald, payload: Array(repeating: UInt8(id), count: Int(id % 130)),
            metadata: id % 2 == 0 ? [1, 2, 3, 4] : nil, checkIn: 1_795_197_600.5, lastSeen: 1_795_197_900,
            checkOut: open ? nil : 1_795_197_900, samples: Int(id) * 3, rssiMax: -41, rssiSum: -2_000_000_000_123,
            clockUncorrected: id % 3 == 0, sharedIdentity: id % 2 == 1)
    }

    /// What a refusal says (nil: no refusal). Not `#expect(throws:)`'s value: Swift 6.0's
    /// swift-testing (the Pi's trixie toolchain) does not return it.
    static func refusal(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error as? WireFormatError)?.description ?? "not a WireFormatError: \(error)"
        }
    }

    @Test func aBatchRoundTrips() throws {
        let batch = VisitBatch(diary: "0123456789abcdef0123456789abcdef", prev: 41, visits: [Self.visit(1, change: 42), Self.visit(2, change: 44, open: true), Self.visit(3, change: 90)])
        let bytes = batch.encoded()
        #expect(try VisitBatch(decoding: bytes) == batch)
        #expect(try VisitBatch(decoding: bytes).visits.map(\.sharedIdentity) == [true, false, true])
        #expect(try VisitBatch(decoding: bytes).visits.map(\.clockUncorrected) == [false, false, true])
        #expect(batch.last == 90)
        #expect(VisitBatch(diary: "d", prev: 7, visits: []).last == 7)
    }

    @Test func everyTruncationAndAnExtraByteAreRefused() throws {
        let bytes = VisitBatch(diary: "d", prev: 0, visits: [Self.visit(1, change: 1), Self.visit(2, change: 2)]).encoded()
        for length in 0..<bytes.count {
            #expect(throws: WireFormatError.self) { try VisitBatch(decoding: Array(bytes.prefix(length))) }
        }
        #expect(throws: WireFormatError.self) { try VisitBatch(decoding: bytes + [0]) }
    }

    @Test func changesMustRiseAbovePrev() throws {
        let notAbove = VisitBatch(diary: "d", prev: 5, visits: [Self.visit(1, change: 5)]).encoded()
        #expect(Self.refusal { try VisitBatch(decoding: notAbove) }?.contains("change 5 does not follow 5") == true)
        let falling = VisitBatch(diary: "d", prev: 0, visits: [Self.visit(1, change: 9), Self.visit(2, change: 8)]).encoded()
        #expect(throws: WireFormatError.self) { try VisitBatch(decoding: falling) }
    }

    @Test func anUnknownKindOrVersionOrATimeThatIsNotANumberIsRefused() throws {
        var bytes = VisitBatch(diary: "d", prev: 0, visits: [Self.visit(1, change: 1)]).encoded()
        var wrongVersion = bytes
        wrongVersion[0] = 2
        #expect(throws: WireFormatError.self) { try VisitBatch(decoding: wrongVersion) }
        // The kind "herald" sits after version, diary ("d"), prev, count, id and change.
        let kindAt = 1 + 2 + 8 + 2 + 8 + 8 + 1
        #expect(bytes[kindAt] == UInt8(ascii: "h"))
        bytes[kindAt] = UInt8(ascii: "x")
        #expect(Self.refusal { try VisitBatch(decoding: bytes) }?.contains("unknown kind") == true)
        var nan = VisitBatch(diary: "d", prev: 0, visits: [Self.visit(1, change: 1)])
        nan.visits[0].checkIn = .nan
        #expect(throws: WireFormatError.self) { try VisitBatch(decoding: nan.encoded()) }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let valid = VisitBatch(diary: "d", prev: 0, visits: [Self.visit(2, change: 1)]).encoded()
        for _ in 0..<5000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? VisitBatch(decoding: bytes)
            _ = try? HubAck(decoding: bytes)
        }
    }

    @Test func anAcknowledgementRoundTripsAndANegativeOneIsRefused() throws {
        let ack = HubAck(diary: "0123456789abcdef0123456789abcdef", acked: 1234)
        #expect(try HubAck(decoding: ack.encoded()) == ack)
        #expect(throws: WireFormatError.self) { try HubAck(decoding: HubAck(diary: "d", acked: -1).encoded()) }
        #expect(throws: WireFormatError.self) { try HubAck(decoding: ack.encoded() + [0]) }
    }

    @Test func aStatusIsJSONWithCountsOnly() throws {
        let status = NodeHealth(online: true, clockSynchronised: false, backlog: 12, present: 3)
        let text = String(decoding: status.encoded(), as: UTF8.self)
        #expect(text == #"{"online": true, "clock_synchronised": false, "backlog": 12, "present": 3}"#)
        #expect(try NodeHealth(decoding: status.encoded()) == status)
        #expect(try NodeHealth(decoding: NodeHealth.offline.encoded()) == NodeHealth(online: false))
        #expect(throws: WireFormatError.self) { try NodeHealth(decoding: Array("[1]".utf8)) }
    }

    @Test func topicsNameTheNodeInOneLevel() {
        #expect(ReplicationTopic.visits("hall") == "venue-beacon/node/hall/visits")
        #expect(ReplicationTopic.parse("venue-beacon/node/hall/visits")! == ("hall", "visits"))
        #expect(ReplicationTopic.parse("venue-beacon/node//visits") == nil)
        #expect(ReplicationTopic.parse("venue-beacon/node/hall/visits/x") == nil)
        #expect(ReplicationTopic.parse("venue-beacon/ack/hall") == nil)
    }
}
