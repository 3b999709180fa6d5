import Testing
@testable import BLEHost

@Suite struct H4FramerTests {
    /// One packet of each type, as they appear on an H4 stream.
    static let stream: [(H4PacketType, String)] = [
        (.command, "030c00"),  // HCI Reset
        (.event, "0e0401030c00"),  // Command Complete (Reset)
        (.acl, "0000" + "0700" + "0300" + "0400" + "0a0100"),  // handle 0, 7 bytes: L2CAP ATT Read Request
        (.sco, "0100" + "03" + "aabbcc"),
        (.iso, "0100" + "02c0" + "eeff"),  // ISO length 2 with the two reserved top bits set
        (.event, "3e0c" + "0201" + "00" + "00" + "420001aa0000" + "00" + "7f"),  // LE Advertising Report, no data
        (.command, "0c2000"),  // zero-length parameters
    ]

    static var streamBytes: [UInt8] {
        stream.flatMap { [$0.0.rawValue] + (Hex.decode($0.1) ?? []) }
    }

    @Test func framesEveryPacketTypeByItsHeaderLength() throws {
        var framer = H4Framer()
        framer.append(Self.streamBytes)
        var packets: [H4Packet] = []
        while let p = try framer.next() { packets.append(p) }
        #expect(packets.map(\.type) == Self.stream.map(\.0))
        #expect(packets.map { Hex.encode($0.body) } == Self.stream.map(\.1))
        #expect(framer.bufferedByteCount == 0)
        #expect(packets.flatMap(\.wireBytes) == Self.streamBytes)
    }

    /// Splitting the stream at any byte boundary (and feeding byte by byte) gives the same packets.
    @Test func sameResultAtEverySplit() throws {
        let bytes = Self.streamBytes
        var whole = H4Framer()
        whole.append(bytes)
        var expected: [H4Packet] = []
        while let p = try whole.next() { expected.append(p) }

        for split in 0...bytes.count {
            var framer = H4Framer()
            var got: [H4Packet] = []
            framer.append(bytes[..<split])
            while let p = try framer.next() { got.append(p) }
            framer.append(bytes[split...])
            while let p = try framer.next() { got.append(p) }
            #expect(got == expected, "split at \(split)")
        }

        var framer = H4Framer()
        var got: [H4Packet] = []
        for b in bytes {
            framer.append([b])
            while let p = try framer.next() { got.append(p) }
        }
        #expect(got == expected)
    }

    @Test func needsMoreBytesIsNil() throws {
        var framer = H4Framer()
        #expect(try framer.next() == nil)
        framer.append([0x02, 0x40, 0x00, 0x10])  // ACL header cut inside the length field
        #expect(try framer.next() == nil)
        framer.append([0x00])
        #expect(try framer.next() == nil)  // 16 bytes announced, none present
        #expect(framer.bufferedByteCount == 5)
    }

    @Test func unknownTypeLosesFramingForGood() throws {
        var framer = H4Framer()
        framer.append([0x04, 0x0e, 0x01, 0x01, 0xFF, 0x01])
        #expect(try framer.next()?.type == .event)
        #expect(throws: H4FramingError.unknownPacketType(0xFF)) { try framer.next() }
        framer.append([0x04, 0x0e, 0x00])
        #expect(throws: H4FramingError.unknownPacketType(0xFF)) { try framer.next() }
    }

    @Test func oversizedLengthIsAnError() throws {
        var framer = H4Framer(maximumBodyLength: 1024)
        framer.append([0x02, 0x01, 0x00, 0x01, 0x04])  // ACL announcing 1025 bytes
        #expect(throws: H4FramingError.oversizedPacket(type: .acl, length: 1025, maximum: 1024)) {
            try framer.next()
        }
        var fine = H4Framer(maximumBodyLength: 1024)
        fine.append([0x02, 0x01, 0x00, 0x00, 0x04] + [UInt8](repeating: 7, count: 1024))
        #expect(try fine.next()?.body.count == 1028)
    }

    @Test func longStreamsDoNotGrowTheBuffer() throws {
        var framer = H4Framer()
        let event: [UInt8] = [0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00]
        for _ in 0..<10_000 {
            framer.append(event)
            #expect(try framer.next()?.body.count == 7)
        }
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func datagramMustHoldExactlyOnePacket() throws {
        let reset: [UInt8] = [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00]
        #expect(try H4Packet(datagram: reset[...]) == H4Packet(type: .event, body: Array(reset.dropFirst())))
        #expect(throws: H4FramingError.truncated(available: 6)) { try H4Packet(datagram: reset.dropLast()) }
        #expect(throws: H4FramingError.trailingBytes(count: 1)) { try H4Packet(datagram: (reset + [0])[...]) }
        #expect(throws: H4FramingError.unknownPacketType(0x00)) { try H4Packet(datagram: [0x00, 0x01][...]) }
        #expect(throws: H4FramingError.truncated(available: 0)) { try H4Packet(datagram: [][...]) }
    }
}
