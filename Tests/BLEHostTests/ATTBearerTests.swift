import Testing
@testable import BLEHost

@Suite struct ATTBearerTests {
    let t0 = ContinuousClock.now

    func sent(_ events: [ATTBearer.Event]) -> [String] {
        events.compactMap { if case .send(let b) = $0 { Hex.encode(b) } else { nil } }
    }

    @Test func oneOutstandingRequestAndAQueueInOrder() {
        var bearer = ATTBearer()
        #expect(sent(bearer.request(.readRequest(.init(handle: 3)), tag: 1, now: t0)) == ["0a0300"])
        #expect(sent(bearer.request(.readRequest(.init(handle: 5)), tag: 2, now: t0)) == [])
        #expect(bearer.isAwaitingPeer)
        // A response to something else is dropped and counted.
        #expect(bearer.receive(h("13")[...], now: t0) == [])
        #expect(bearer.receive(h("01 0c 0300 0a")[...], now: t0) == [])
        #expect(bearer.counters.unexpected == 2)
        // The matching response completes tag 1 and sends the next request.
        #expect(bearer.receive(h("0b 76")[...], now: t0) == [
            .response(tag: 1, .readResponse(.init(value: [0x76]))), .send(h("0a 0500")),
        ])
        // An Error Response for the outstanding request's opcode also matches.
        #expect(bearer.receive(h("01 0a 0500 02")[...], now: t0) == [
            .response(tag: 2, .errorResponse(.init(requestOpcode: .readRequest, handle: 5, error: .readNotPermitted)))
        ])
        #expect(!bearer.isAwaitingPeer)
        #expect(bearer.receive(h("0b 76")[...], now: t0) == [])
        #expect(bearer.counters.unexpected == 3)
    }

    @Test func malformedResponseFailsTheRequest() {
        var bearer = ATTBearer()
        _ = bearer.request(.findInformationRequest(.init(startHandle: 1, endHandle: 9)), tag: 7, now: t0)
        _ = bearer.request(.readRequest(.init(handle: 3)), tag: 8, now: t0)
        let events = bearer.receive(h("05 01 0100 00")[...], now: t0)
        guard case .requestFailed(7, .malformedResponse)? = events.first else {
            Issue.record("expected a failure, got \(events)")
            return
        }
        #expect(events.dropFirst().map { $0 } == [.send(h("0a 0300"))])
    }

    @Test func peerRequestsOneAtATime() {
        var bearer = ATTBearer()
        #expect(bearer.receive(h("0a 0300")[...], now: t0) == [.request(.readRequest(.init(handle: 3)))])
        // A second request before we answered is ignored (the peer broke the protocol).
        #expect(bearer.receive(h("0a 0500")[...], now: t0) == [])
        #expect(bearer.counters.ignored == 1)
        #expect(bearer.respond(.readResponse(.init(value: [1]))) == [.send(h("0b 01"))])
        #expect(bearer.respond(.readResponse(.init(value: [1]))) == [])
        #expect(bearer.receive(h("0a 0500")[...], now: t0) == [.request(.readRequest(.init(handle: 5)))])
    }

    @Test func indicationsFromThePeerAreConfirmed() {
        var bearer = ATTBearer()
        #expect(bearer.receive(h("1d 0800 01")[...], now: t0) == [
            .send(h("1e")), .indication(.init(handle: 8, value: [1])),
        ])
        #expect(bearer.receive(h("1b 0800 02")[...], now: t0) == [.notification(.init(handle: 8, value: [2]))])
        #expect(bearer.receive(h("23 0800 0100 01")[...], now: t0) == [])  // multiple notification: unsupported
    }

    @Test func mtuFromEitherExchange() {
        var client = ATTBearer()
        _ = client.request(.exchangeMTURequest(.init(clientRxMTU: 185)), tag: 1, now: t0)
        _ = client.receive(h("03 0502")[...], now: t0)
        #expect(client.mtu == 185)
        var server = ATTBearer()
        _ = server.receive(h("02 0002")[...], now: t0)
        #expect(server.mtu == 23)  // only once answered
        _ = server.respond(.exchangeMTUResponse(.init(serverRxMTU: 247)))
        #expect(server.mtu == 247)
        var tiny = ATTBearer()
        _ = tiny.request(.exchangeMTURequest(.init(clientRxMTU: 517)), tag: 1, now: t0)
        _ = tiny.receive(h("03 0500")[...], now: t0)
        #expect(tiny.mtu == 23)
    }

    @Test func transactionTimeoutKillsTheBearer() {
        var bearer = ATTBearer()
        _ = bearer.request(.readRequest(.init(handle: 3)), tag: 1, now: t0)
        _ = bearer.request(.readRequest(.init(handle: 4)), tag: 2, now: t0 + .seconds(10))
        #expect(bearer.nextDeadline == t0 + .seconds(30))
        #expect(bearer.tick(now: t0 + .seconds(29)) == [])
        #expect(bearer.tick(now: t0 + .seconds(30)) == [
            .requestFailed(tag: 1, .timedOut), .requestFailed(tag: 2, .timedOut), .timedOut,
        ])
        #expect(bearer.isClosed)
        #expect(bearer.nextDeadline == nil)
        #expect(bearer.receive(h("0b 01")[...], now: t0 + .seconds(31)) == [])
        #expect(bearer.receive(h("0a 0300")[...], now: t0 + .seconds(31)) == [])
        #expect(bearer.request(.readRequest(.init(handle: 3)), tag: 3, now: t0) == [.requestFailed(tag: 3, .closed)])
    }

    @Test func lateResponseAfterDeadlineStillTimesOut() {
        var bearer = ATTBearer()
        _ = bearer.request(.readRequest(.init(handle: 3)), tag: 1, now: t0)
        #expect(bearer.receive(h("0b 01")[...], now: t0 + .seconds(31)) == [.requestFailed(tag: 1, .timedOut), .timedOut])
    }

    @Test func unconfirmedIndicationTimesOut() {
        var bearer = ATTBearer()
        #expect(sent(bearer.indicate(.init(handle: 8, value: [1]), now: t0)) == ["1d080001"])
        #expect(sent(bearer.indicate(.init(handle: 8, value: [2]), now: t0)) == [])
        #expect(bearer.tick(now: t0 + .seconds(30)) == [.timedOut])
        #expect(bearer.indicate(.init(handle: 8, value: [3]), now: t0) == [])
    }

    @Test func closeFailsEverythingPending() {
        var bearer = ATTBearer()
        _ = bearer.request(.readRequest(.init(handle: 3)), tag: 1, now: t0)
        #expect(bearer.close() == [.requestFailed(tag: 1, .closed)])
        #expect(bearer.close() == [])
    }
}

/// Found by the ATT fuzzer: a Prepare Write Request longer than the MTU was echoed in a
/// response longer than the MTU.
@Suite struct ATTMTULimitTests {
    @Test func aRequestLongerThanTheMTUIsAnInvalidPDU() throws {
        let database = try Fixture.database()
        var connection = GATTConnection(link: 1)
        #expect(connection.mtu == 23)
        var prepare: [UInt8] = [0x16, 0x0C, 0x00, 0x00, 0x00]
        prepare += [UInt8](repeating: 0x41, count: 19)  // 24 bytes
        let answers = connection.receive(prepare[...], database: database, now: .now)
        #expect(answers.count == 1)
        guard case .send(let bytes) = answers.first else {
            Issue.record("expected an answer")
            return
        }
        #expect(bytes == [0x01, 0x16, 0x00, 0x00, 0x04])
        // A command that long is dropped without an answer.
        let command: [UInt8] = [0x52, 0x03, 0x00] + [UInt8](repeating: 1, count: 21)
        #expect(connection.receive(command[...], database: database, now: .now).isEmpty)
        // Exactly the MTU is fine.
        let fits = Array(prepare.prefix(23))
        guard case .send(let echoed) = connection.receive(fits[...], database: database, now: .now).first else {
            Issue.record("expected an answer")
            return
        }
        #expect(echoed.count <= 23)
    }
}
