import BLEHost
import Testing

@testable import Herald

@Suite struct SignalWriteTests {
    @Test func writePayload() throws {
        let bytes: [UInt8] = [0x01, 0x03, 0x00, 0xAA, 0xBB, 0xCC]
        #expect(try SignalWrite(decoding: bytes) == .payload([0xAA, 0xBB, 0xCC]))
        #expect(try SignalWrite.payload([0xAA, 0xBB, 0xCC]).encoded() == bytes)
    }

    @Test func writePayloadOf129Bytes() throws {
        let payload = TestPayload.make(identifier: 42)
        let bytes = try SignalWrite.payload(payload).encoded()
        #expect(Array(bytes.prefix(3)) == [0x01, 0x81, 0x00])
        #expect(try SignalWrite(decoding: bytes) == .payload(payload))
    }

    @Test func writeRSSIIsExactlyThreeBytes() throws {
        #expect(try SignalWrite(decoding: [0x02, 0xC8, 0xFF]) == .rssi(-56))
        #expect(try SignalWrite.rssi(-56).encoded() == [0x02, 0xC8, 0xFF])
        #expect(throws: SignalWriteError(action: .writeRSSI, expected: 3, actual: 5)) {
            try SignalWrite(decoding: [0x02, 0xC8, 0xFF, 0xFF, 0xFF])  // the "Int32" of Herald's comments
        }
        #expect(throws: SignalWriteError(action: .writeRSSI, expected: 3, actual: 2)) { try SignalWrite(decoding: [0x02, 0xC8]) }
    }

    @Test func writePayloadSharing() throws {
        let a = TestPayload.make(identifier: 1), b = TestPayload.make(identifier: 2)
        let bytes = try SignalWrite.payloadSharing(rssi: -70, payloads: a + b).encoded()
        #expect(Array(bytes.prefix(5)) == [0x03, 0xBA, 0xFF, 0x02, 0x01])
        #expect(bytes.count == 5 + 258)
        #expect(try SignalWrite(decoding: bytes) == .payloadSharing(rssi: -70, payloads: a + b))
        #expect(try SignalWrite(decoding: [0x03, 0xBA, 0xFF, 0x00, 0x00]) == .payloadSharing(rssi: -70, payloads: []))
    }

    @Test func writeImmediate() throws {
        #expect(try SignalWrite(decoding: [0x04, 0x02, 0x00, 0x68, 0x69]) == .immediate([0x68, 0x69]))
        #expect(try SignalWrite.immediate([0x68, 0x69]).encoded() == [0x04, 0x02, 0x00, 0x68, 0x69])
    }

    @Test func emptyWriteIsWake() throws {
        #expect(try SignalWrite(decoding: []) == .wake)
        #expect(try SignalWrite.wake.encoded() == [])
        #expect(SignalWrite.wake.action == nil)
    }

    @Test func unknownActionsSurvive() throws {
        let write = try SignalWrite(decoding: [0x09, 0x01, 0x02])
        #expect(write == .unknown(action: SignalAction(rawValue: 0x09), data: [0x01, 0x02]))
        #expect(try write.encoded() == [0x09, 0x01, 0x02])
        #expect(write.action?.description == "action 0x09")
    }

    @Test(arguments: [
        // Too short for the length field.
        ([UInt8]([0x01]), SignalWriteError(action: .writePayload, expected: 3, actual: 1, atLeast: true)),
        ([0x01, 0x05], SignalWriteError(action: .writePayload, expected: 3, actual: 2, atLeast: true)),
        ([0x03, 0xBA, 0xFF, 0x01], SignalWriteError(action: .writePayloadSharing, expected: 5, actual: 4, atLeast: true)),
        ([0x04], SignalWriteError(action: .writeImmediate, expected: 3, actual: 1, atLeast: true)),
        // Length field disagrees with the bytes: fewer, more.
        ([0x01, 0x04, 0x00, 0xAA, 0xBB, 0xCC], SignalWriteError(action: .writePayload, expected: 7, actual: 6)),
        ([0x01, 0x01, 0x00, 0xAA, 0xBB], SignalWriteError(action: .writePayload, expected: 4, actual: 5)),
        ([0x01, 0x00, 0x00, 0xAA], SignalWriteError(action: .writePayload, expected: 3, actual: 4)),
        ([0x03, 0x00, 0x00, 0x02, 0x00, 0x01], SignalWriteError(action: .writePayloadSharing, expected: 7, actual: 6)),
        ([0x04, 0xFF, 0xFF, 0x01], SignalWriteError(action: .writeImmediate, expected: 65538, actual: 4)),
    ])
    func malformedWritesAreTypedErrors(bytes: [UInt8], error: SignalWriteError) {
        #expect(throws: error) { try SignalWrite(decoding: bytes) }
        #expect(SignalWriteError.attError.rawValue == 0x0D)
    }

    @Test func everyTruncationOfAValidWriteFailsOrIsShorterValid() throws {
        let bytes = try SignalWrite.payloadSharing(rssi: -60, payloads: [1, 2, 3, 4]).encoded()
        for n in 1..<bytes.count {
            #expect(throws: SignalWriteError.self) { try SignalWrite(decoding: bytes[..<n]) }
        }
    }

    @Test func decodesFromASliceWithOffsetIndices() throws {
        let framed: [UInt8] = [0xEE, 0xEE, 0x02, 0x9C, 0xFF]
        #expect(try SignalWrite(decoding: framed[2...]) == .rssi(-100))
    }

    @Test func oversizedEncodingIsAnError() {
        let huge = [UInt8](repeating: 0, count: 65536)
        #expect(throws: SignalWriteError(action: .writePayload, expected: 3 + 65535, actual: 3 + 65536, atMost: true)) {
            try SignalWrite.payload(huge).encoded()
        }
    }
}

@Suite struct SharedPayloadsTests {
    let a = TestPayload.make(identifier: 1), b = TestPayload.make(identifier: 2), c = TestPayload.make(identifier: 3)

    @Test func splitsFixedLengthAndDropsATrailingPartial() {
        let parts = SharedPayloads.split((a + b + [0x00, 0x01])[...], payloadLength: 129)
        #expect(parts.map(Array.init) == [a, b])
        #expect(SharedPayloads.split([1, 2, 3][...], payloadLength: 0).isEmpty)
    }

    @Test func splitsByTheWritersLengthFirst() {
        let simple: [UInt8] = [0x10] + [UInt8](repeating: 7, count: 20)
        let data = (simple + simple)[...]
        #expect(SharedPayloads.split(data, writerPayloadLength: 21)?.count == 2)
        #expect(SharedPayloads.split(data, writerPayloadLength: 42)?.count == 1)
        // Writer's length does not divide the data: fall back to the format, here simple.
        #expect(SharedPayloads.split(data, writerPayloadLength: 129)?.count == 2)
    }

    @Test func infersKnownFormats() {
        #expect(SharedPayloads.inferredPayloadLength((a + b + c)[...]) == 129)
        let simple: [UInt8] = [0x11] + [UInt8](repeating: 1, count: 20)
        #expect(SharedPayloads.inferredPayloadLength((simple + simple + simple)[...]) == 21)
        #expect(SharedPayloads.inferredPayloadLength((a + [0])[...]) == nil)
        #expect(SharedPayloads.inferredPayloadLength([0x30, 1, 2, 3][...]) == nil)
        #expect(SharedPayloads.split([0x30, 1, 2, 3][...], writerPayloadLength: nil) == nil)
        #expect(SharedPayloads.inferredPayloadLength([][...]) == nil)
    }

    @Test func concatenatesOnlyTheTargetsLengthWithinOneAttributeValue() {
        let odd: [UInt8] = [0x10] + [UInt8](repeating: 1, count: 20)
        let d = TestPayload.make(identifier: 4)
        let data = SharedPayloads.concatenate([a, odd, b, c, d], length: 129)
        #expect(data == a + b + c)  // 3 × 129 = 387 ≤ 507; a fourth would not fit
        #expect(SharedPayloads.split(data[...], payloadLength: 129).map(Array.init) == [a, b, c])
        #expect(SharedPayloads.concatenate([a], length: 0).isEmpty)
    }
}
