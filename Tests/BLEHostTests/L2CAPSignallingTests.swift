import Testing
@testable import BLEHost

@Suite struct L2CAPSignallingTests {
    let updateRequest = "12 01 08 00 18 00 28 00 00 00 f4 01"

    @Test func codecRoundTrip() throws {
        let request = try L2CAPSignal(decoding: hexBytes(updateRequest)[...])
        #expect(request == .connectionParameterUpdateRequest(identifier: 1, LEConnectionParameters(intervalMin: 0x18, intervalMax: 0x28, latency: 0, supervisionTimeout: 0x1F4)))
        #expect(request.encoded == hexBytes(updateRequest))
        let reject = try L2CAPSignal(decoding: hexBytes("01 07 02 00 00 00")[...])
        #expect(reject == .commandReject(identifier: 7, reason: .commandNotUnderstood, data: []))
        #expect(reject.encoded == hexBytes("01 07 02 00 00 00"))
        let response = try L2CAPSignal(decoding: hexBytes("13 02 02 00 01 00")[...])
        #expect(response == .connectionParameterUpdateResponse(identifier: 2, result: 1))
        #expect(try L2CAPSignal(decoding: hexBytes("06 03 04 00 40 00 41 00")[...]) == .other(code: .disconnectionRequest, identifier: 3, data: [0x40, 0, 0x41, 0]))
        for bad in ["", "12", "12 01 08", "12 01 08 00 18 00", "12 01 06 00 18 00 28 00 00 00", "13 01 01 00 00", "01 01 00 00", "12 01 02 00 01 02 03"] {
            #expect(throws: DecodeError.self, "\(bad)") { try L2CAPSignal(decoding: hexBytes(bad)[...]) }
        }
    }

    @Test func centralAcceptsParameterUpdate() {
        let response = L2CAPSignallingResponder.respond(to: hexBytes(updateRequest)[...], role: .central)
        #expect(response.reply == hexBytes("13 01 02 00 00 00"))
        #expect(response.connectionUpdate == LEConnectionParameters(intervalMin: 0x18, intervalMax: 0x28, latency: 0, supervisionTimeout: 0x1F4))
    }

    @Test func centralRefusesInvalidParameters() {
        // Interval max below min.
        let response = L2CAPSignallingResponder.respond(to: hexBytes("12 09 08 00 28 00 18 00 00 00 f4 01")[...], role: .central)
        #expect(response.reply == hexBytes("13 09 02 00 01 00"))
        #expect(response.connectionUpdate == nil)
    }

    @Test func peripheralRejectsParameterUpdate() {
        let response = L2CAPSignallingResponder.respond(to: hexBytes(updateRequest)[...], role: .peripheral)
        #expect(response.reply == hexBytes("01 01 02 00 00 00"))
        #expect(response.connectionUpdate == nil)
    }

    @Test func unknownCommandsAreRejected() {
        // LE Credit Based Connection Request: not supported here.
        let creditBased = "14 05 0a 00 80 00 40 00 17 00 17 00 0a 00"
        #expect(L2CAPSignallingResponder.respond(to: hexBytes(creditBased)[...], role: .peripheral).reply == hexBytes("01 05 02 00 00 00"))
        // A malformed known command with a readable identifier.
        #expect(L2CAPSignallingResponder.respond(to: hexBytes("12 0b 08 00 18 00")[...], role: .central).reply == hexBytes("01 0b 02 00 00 00"))
    }

    @Test func rejectsResponsesAndGarbageGetNoAnswer() {
        for quiet in ["01 07 02 00 00 00", "13 02 02 00 00 00", "13 02 05", "", "12"] {
            #expect(L2CAPSignallingResponder.respond(to: hexBytes(quiet)[...], role: .central) == L2CAPSignallingResponder.Response(), "\(quiet)")
        }
    }
}

@Suite struct SMPResponderTests {
    @Test func pairingIsNotSupported() {
        // Pairing Request: IO capability NoInputNoOutput, no OOB, bonding, max key 16, key distribution.
        #expect(SMPResponder.respond(to: hexBytes("01 03 00 01 10 07 07")[...]) == [0x05, 0x05])
        #expect(SMPResponder.respond(to: hexBytes("0b 01")[...]) == [0x05, 0x05])
        #expect(SMPResponder.respond(to: hexBytes("05 03")[...]) == nil)
        #expect(SMPResponder.respond(to: [UInt8]()[...]) == nil)
    }
}
