import BLEHost
import BLETransport
import Testing

extension RadioTests {
    /// A raw peer (our transport driven with hand-made bytes) connects to our host and sends
    /// what a broken or hostile phone might: every request still gets the protocol's answer, the
    /// rest is dropped, and the host keeps serving.
    @Suite struct MalformedPeerTests {
        /// One L2CAP frame in one ACL packet (PB 00, first non-flushable).
        static func acl(_ handle: UInt16, cid: UInt16, _ payload: [UInt8], l2capLength: Int? = nil, boundary: UInt16 = 0) -> H4Packet {
            var body: [UInt8] = []
            body.appendLE16(handle | boundary << 12)
            body.appendLE16(UInt16(4 + payload.count))
            body.appendLE16(UInt16(l2capLength ?? payload.count))
            body.appendLE16(cid)
            return H4Packet(type: .acl, body: body + payload)
        }

        /// The L2CAP payload of an ACL packet on `cid`, if it is one.
        static func payload(_ packet: H4Packet, cid: UInt16) -> [UInt8]? {
            let b = packet.body
            guard packet.type == .acl, b.count >= 8, UInt16(b[6]) | UInt16(b[7]) << 8 == cid else { return nil }
            return Array(b[8...])
        }

        @Test func garbageFromAPeerGetsProtocolErrorsAndTheHostKeepsServing() async throws {
            try await BTVirt.run { btvirt in
                try await btvirt.withHosts([try HostRadioTests.peripheral()]) { hosts in
                    let host = hosts[0]
                    try await host.advertising()
                    let peer = try await TestTransport.open(btvirt.leSpec)
                    defer { peer.close() }
                    #expect(try await peer.command(0x0C03) == [0])
                    // LE Create Connection to our host (public address), default parameters.
                    var create: [UInt8] = [0x60, 0x00, 0x60, 0x00, 0x00, 0x00]
                    create += host.address.littleEndianBytes
                    create += [0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00]
                    var body: [UInt8] = []
                    body.appendLE16(0x200D)
                    body.append(UInt8(create.count))
                    try await peer.send(H4Packet(type: .command, body: body + create))
                    let complete = try await peer.receive { $0.type == .event && $0.body.count >= 6 && $0.body[0] == 0x3E && $0.body[2] == 0x01 }
                    let event = try #require(complete.last).body
                    #expect(event[3] == 0x00, "connection status")
                    let handle = UInt16(event[4]) | UInt16(event[5]) << 8

                    func exchange(_ packet: H4Packet, cid: UInt16) async throws -> [UInt8] {
                        try await peer.send(packet)
                        let got = try await peer.receive { Self.payload($0, cid: cid) != nil }
                        return try #require(got.last.flatMap { Self.payload($0, cid: cid) })
                    }

                    // ATT Read Request one byte short → Error Response "Invalid PDU" (0x04).
                    #expect(try await exchange(Self.acl(handle, cid: 4, [0x0A, 0x03]), cid: 4) == [0x01, 0x0A, 0x00, 0x00, 0x04])
                    // An unknown request opcode → "Request Not Supported" (0x06).
                    #expect(try await exchange(Self.acl(handle, cid: 4, [0x3E, 0x01, 0x02]), cid: 4) == [0x01, 0x3E, 0x00, 0x00, 0x06])
                    // SMP Pairing Request → Pairing Failed, "pairing not supported".
                    #expect(try await exchange(Self.acl(handle, cid: 6, [0x01, 0x03, 0x00, 0x00, 0x10, 0x07, 0x07]), cid: 6) == [0x05, 0x05])
                    // An unknown signalling command → Command Reject "not understood", same identifier.
                    #expect(try await exchange(Self.acl(handle, cid: 5, [0x99, 0x42, 0x00, 0x00]), cid: 5) == [0x01, 0x42, 0x02, 0x00, 0x00, 0x00])

                    // Dropped without an answer: an unknown command (bit 6), an empty ATT PDU, an
                    // unknown channel, a continuation without a start, a frame cut short by the next.
                    try await peer.send(Self.acl(handle, cid: 4, [0x7F, 0x01]))
                    try await peer.send(Self.acl(handle, cid: 4, []))
                    try await peer.send(Self.acl(handle, cid: 0x0040, [0x01, 0x02, 0x03]))
                    try await peer.send(Self.acl(handle, cid: 4, [0x0A, 0x03, 0x00], boundary: 1))
                    try await peer.send(Self.acl(handle, cid: 4, [0x0A, 0x03], l2capLength: 40))

                    // Still serving: Read Request for the Device Name (handle 3).
                    let name = try await exchange(Self.acl(handle, cid: 4, [0x0A, 0x03, 0x00]), cid: 4)
                    #expect(name == [0x0B] + Array("venue-test".utf8))
                }
            }
        }
    }
}
