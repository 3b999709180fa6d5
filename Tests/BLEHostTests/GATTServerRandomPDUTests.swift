import Testing
@testable import BLEHost

/// Random PDUs against the server, deterministically seeded: every request (known, unknown,
/// malformed) gets exactly one answer, either its response or an Error Response naming it;
/// indications get their confirmation; commands, responses and the rest get nothing; nothing
/// crashes.
@Suite struct GATTServerRandomPDUTests {
    /// xorshift64*: a fixed sequence, so a failure reproduces.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
    }

    static let opcodes: [UInt8] = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11,
        0x12, 0x13, 0x16, 0x17, 0x18, 0x19, 0x1B, 0x1D, 0x1E, 0x20, 0x52, 0xD2,
    ]

    @Test(arguments: [UInt64(1), 0x5EED, 0xDEAD_BEEF])
    func everyRequestGetsExactlyOneAnswer(seed: UInt64) throws {
        var random = Generator(state: seed)
        let database = try Fixture.database()
        var connection = GATTConnection(link: 7)
        let now = ContinuousClock.now
        for _ in 0..<5000 {
            let opcode = Bool.random(using: &random)
                ? Self.opcodes.randomElement(using: &random) ?? 0 : UInt8.random(in: 0...255, using: &random)
            // Small handles hit the database; parameters of every length up to a full PDU.
            var pdu: [UInt8] = [opcode]
            let length = Int.random(in: 0...(Bool.random(using: &random) ? 6 : 40), using: &random)
            for k in 0..<length {
                pdu.append(k % 2 == 0 && Bool.random(using: &random) ? UInt8.random(in: 0...22, using: &random) : UInt8.random(in: 0...255, using: &random))
            }
            let sent = connection.receive(pdu[...], database: database, now: now).compactMap { action -> [UInt8]? in
                if case .send(let bytes) = action { return bytes }
                return nil
            }
            let code = ATTOpcode(opcode)
            let isRequest = code.kind == .request || (code.kind == nil && !code.isCommand)
            if isRequest {
                try #require(sent.count == 1, "request \(Hex.encode(pdu)) got \(sent.count) answers")
                let answer = try ATTPDU.decode(sent[0])
                #expect(sent[0].count <= connection.mtu)
                if case .errorResponse(let error) = answer {
                    #expect(error.requestOpcode == code)
                } else {
                    #expect(answer.opcode == code.responseOpcode, "request \(Hex.encode(pdu))")
                }
            } else if code == .handleValueIndication, pdu.count >= 3 {
                #expect(sent == [[0x1E]], "indication \(Hex.encode(pdu)) not confirmed")
            } else {
                #expect(sent.isEmpty, "\(Hex.encode(pdu)) was answered")
            }
        }
        #expect(!connection.bearer.isClosed)
    }
}
