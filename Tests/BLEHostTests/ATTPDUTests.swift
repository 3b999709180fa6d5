import Testing
@testable import BLEHost

/// Hex test vectors; a typo yields an empty array, which no expectation accepts.
func h(_ text: String) -> [UInt8] { Hex.decode(text) ?? [] }

@Suite struct ATTPDUTests {
    /// Decodes `hex`, checks the case, and checks that encoding gives the same bytes back.
    func roundTrip(_ hex: String, _ expected: ATTPDU) throws {
        let bytes = h(hex)
        #expect(!bytes.isEmpty)
        let pdu = try ATTPDU.decode(bytes)
        #expect(pdu == expected)
        #expect(pdu.encoded() == bytes)
        #expect(expected.encoded() == bytes)
        #expect(pdu.opcode.rawValue == bytes[0])
    }

    let herald128 = BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!

    @Test func everyPDUFromHex() throws {
        try roundTrip("01 0a 0300 0a", .errorResponse(.init(requestOpcode: .readRequest, handle: 3, error: .attributeNotFound)))
        try roundTrip("02 0502", .exchangeMTURequest(.init(clientRxMTU: 517)))
        try roundTrip("03 1700", .exchangeMTUResponse(.init(serverRxMTU: 23)))
        try roundTrip("04 0100 ffff", .findInformationRequest(.init(startHandle: 1, endHandle: 0xFFFF)))
        try roundTrip(
            "05 01 0800 052a 0900 0229",
            .findInformationResponse(.init(format: .uuid16, entries: [
                .init(handle: 8, type: BluetoothUUID(0x2A05 as UInt16)),
                .init(handle: 9, type: GATTUUID.clientCharacteristicConfiguration),
            ])))
        try roundTrip(
            "05 02 0c00 111a82809ae024837a432e0913b817f6",
            .findInformationResponse(.init(format: .uuid128, entries: [.init(handle: 12, type: herald128)])))
        try roundTrip(
            "06 0100 ffff 0028 f6fc",
            .findByTypeValueRequest(.init(startHandle: 1, endHandle: 0xFFFF, attributeType: 0x2800, value: [0xF6, 0xFC])))
        try roundTrip(
            "07 0a00 0e00 0f00 1300",
            .findByTypeValueResponse(.init(entries: [.init(foundHandle: 10, groupEndHandle: 14), .init(foundHandle: 15, groupEndHandle: 19)])))
        try roundTrip(
            "08 0100 ffff 0328", .readByTypeRequest(.init(startHandle: 1, endHandle: 0xFFFF, attributeType: GATTUUID.characteristic)))
        try roundTrip(
            "08 0100 ffff 111a82809ae024837a432e0913b817f6",
            .readByTypeRequest(.init(startHandle: 1, endHandle: 0xFFFF, attributeType: herald128)))
        try roundTrip(
            "09 07 0200 02 0300 002a 0400 02 0500 012a",
            .readByTypeResponse(.init(entries: [.init(handle: 2, value: h("02 0300 002a")), .init(handle: 4, value: h("02 0500 012a"))])))
        try roundTrip("0a 0300", .readRequest(.init(handle: 3)))
        try roundTrip("0b 76656e7565", .readResponse(.init(value: Array("venue".utf8))))
        try roundTrip("0b", .readResponse(.init(value: [])))
        try roundTrip("0c 0e00 1600", .readBlobRequest(.init(handle: 14, offset: 22)))
        try roundTrip("0d 0102", .readBlobResponse(.init(value: [1, 2])))
        try roundTrip("0e 0300 0500 0e00", .readMultipleRequest(.init(handles: [3, 5, 14])))
        try roundTrip("0f 0102", .readMultipleResponse(.init(values: [1, 2])))
        try roundTrip(
            "10 0100 ffff 0028", .readByGroupTypeRequest(.init(startHandle: 1, endHandle: 0xFFFF, groupType: GATTUUID.primaryService)))
        try roundTrip(
            "11 06 0100 0500 0018 0600 0900 0118",
            .readByGroupTypeResponse(.init(entries: [
                .init(handle: 1, groupEndHandle: 5, value: [0x00, 0x18]), .init(handle: 6, groupEndHandle: 9, value: [0x01, 0x18]),
            ])))
        try roundTrip("12 0c00 020000", .writeRequest(.init(handle: 12, value: [2, 0, 0])))
        try roundTrip("12 0c00", .writeRequest(.init(handle: 12, value: [])))
        try roundTrip("13", .writeResponse(.init()))
        try roundTrip("52 0c00 02ff", .writeCommand(.init(handle: 12, value: [2, 0xFF])))
        try roundTrip("16 0c00 0200 aabb", .prepareWriteRequest(.init(handle: 12, offset: 2, value: [0xAA, 0xBB])))
        try roundTrip("17 0c00 0200 aabb", .prepareWriteResponse(.init(handle: 12, offset: 2, value: [0xAA, 0xBB])))
        try roundTrip("18 01", .executeWriteRequest(.init(flags: ATTExecuteWriteRequest.write)))
        try roundTrip("18 07", .executeWriteRequest(.init(flags: 7)))
        try roundTrip("19", .executeWriteResponse(.init()))
        try roundTrip("1b 1100 64", .handleValueNotification(.init(handle: 17, value: [100])))
        try roundTrip("1d 0800 0100ffff", .handleValueIndication(.init(handle: 8, value: [1, 0, 0xFF, 0xFF])))
        try roundTrip("1e", .handleValueConfirmation(.init()))
        try roundTrip("3f 0102", .unsupported(opcode: ATTOpcode(0x3F), parameters: [1, 2]))
        try roundTrip("d2 0c00 00 0102030405060708090a0b0c", .unsupported(opcode: .signedWriteCommand, parameters: h("0c00 00 0102030405060708090a0b0c")))
    }

    /// Wrong sizes for their opcode: a typed error naming the opcode, never a crash.
    @Test(arguments: [
        "01 0a 0300", "01 0a 0300 0a 00", "02", "02 05", "02 050200", "03 17", "04 0100", "04 0100 ffff 00",
        "05 01", "05 01 0800 05", "05 03 0800 0500", "05 02 0800 052a", "06 0100 ffff 00", "07 0a00 0e", "07",
        "08 0100 ffff 03", "08 0100 ffff 032800", "08 0100 ffff 0102030405060708090a0b0c0d0e0f", "08 0100",
        "09 07 0200 02 0300 002a 04", "09 01 0200", "09 07", "0a 03", "0a 030000", "0c 0e00 16", "0c 0e00 160000",
        "0e 0300", "0e 0300 05", "10 0100 ffff 00280000", "11 06 0100 0500 00", "11 03 0100 05", "12 0c",
        "13 00", "52 0c", "16 0c00 02", "17 0c", "18", "18 0100", "19 00", "1b 11", "1d", "1e 00",
    ])
    func wrongSizesAreTypedErrors(_ hex: String) throws {
        let bytes = h(hex)
        do {
            _ = try ATTPDU.decode(bytes)
            Issue.record("\(hex) decoded")
        } catch {
            #expect(error.opcode == ATTOpcode(bytes[0]))
        }
    }

    @Test func emptyPDUHasNoOpcode() {
        do {
            _ = try ATTPDU.decode([UInt8]())
            Issue.record("empty PDU decoded")
        } catch {
            #expect(error.opcode == nil)
            #expect(error.reason.kind == .truncated)
        }
    }

    @Test func opcodeClassification() {
        #expect(ATTOpcode.readRequest.kind == .request)
        #expect(ATTOpcode.readRequest.responseOpcode == .readResponse)
        #expect(ATTOpcode.exchangeMTURequest.responseOpcode == .exchangeMTUResponse)
        #expect(ATTOpcode.errorResponse.kind == .response)
        #expect(ATTOpcode.writeCommand.kind == .command)
        #expect(ATTOpcode.writeCommand.isCommand && ATTOpcode.writeCommand.method == 0x12)
        #expect(ATTOpcode.signedWriteCommand.isSigned && ATTOpcode.signedWriteCommand.isCommand)
        #expect(ATTOpcode.handleValueNotification.kind == .notification)
        #expect(ATTOpcode.handleValueIndication.kind == .indication)
        #expect(ATTOpcode.handleValueConfirmation.kind == .confirmation)
        #expect(ATTOpcode.handleValueIndication.responseOpcode == nil)
        #expect(ATTOpcode(0x3F).kind == nil)
        #expect(ATTOpcode(0x7F).isCommand)
        #expect(ATTErrorCode(0x0D) == .invalidAttributeValueLength)
        #expect(ATTErrorCode(0x99).description.hasSuffix("(0x99)"))
    }

    /// Every possible one- and two-byte PDU decodes or throws; none crashes.
    @Test func shortInputsNeverCrash() {
        for a in 0...255 {
            _ = try? ATTPDU.decode([UInt8(a)])
            for b in stride(from: 0, through: 255, by: 17) { _ = try? ATTPDU.decode([UInt8(a), UInt8(b)]) }
        }
    }
}
