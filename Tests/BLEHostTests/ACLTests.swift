import Testing
@testable import BLEHost

@Suite struct ACLFramingTests {
    @Test func headerRoundTrip() throws {
        // Controller → host: handle 0x040, PB 0b10, 7 bytes: L2CAP length 3 on ATT, Read Request.
        let bytes = hexBytes("40 20 07 00 03 00 04 00 0a 01 00")
        let packet = try ACLPacket(decoding: bytes)
        #expect(packet.header.handle == 0x040 && packet.header.boundary == .first && packet.header.broadcast == 0)
        #expect(packet.header.length == 7)
        #expect(Array(packet.data) == hexBytes("03 00 04 00 0a 01 00"))
        #expect(packet.h4Packet == [0x02] + bytes)
        #expect(throws: DecodeError.self) { try ACLPacket(decoding: hexBytes("40 20 08 00 03 00 04 00 0a 01 00")) }
        #expect(throws: DecodeError.self) { try ACLPacket(decoding: hexBytes("40 20 06 00 03 00 04 00 0a 01 00")) }
        #expect(throws: DecodeError.self) { try ACLPacket(decoding: hexBytes("40")) }
    }

    @Test func fragmentsInto27ByteBuffers() throws {
        let payload = [UInt8](0..<30)
        let packets = ACLFragmenter.fragment(handle: 0x040, channel: .att, payload: payload, maximumDataLength: 27)
        #expect(packets.count == 2)
        #expect(Array(packets[0].prefix(9)) == hexBytes("02 40 00 1b 00 1e 00 04 00"))
        #expect(packets[0].count == 1 + 4 + 27)
        #expect(Array(packets[1].prefix(5)) == hexBytes("02 40 10 07 00"))
        #expect(Array(packets[1].dropFirst(5)) == Array(payload.suffix(7)))
    }

    @Test func fragmentsInto192ByteBuffers() throws {
        let payload = (0..<400).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let packets = ACLFragmenter.fragment(handle: 0x123, channel: .att, payload: payload, maximumDataLength: 192)
        #expect(packets.map(\.count) == [197, 197, 25])
        let decoded = try packets.map { try ACLPacket(decoding: $0.dropFirst()) }
        #expect(decoded.map(\.header.boundary) == [.firstNonFlushable, .continuing, .continuing])
        #expect(decoded.allSatisfy { $0.header.handle == 0x123 })
        #expect(decoded.flatMap(\.data) == [0x90, 0x01, 0x04, 0x00] + payload)
    }

    @Test func smallFramesFitOnePacketAndEmptyPayloadsStillCarryAHeader() {
        #expect(ACLFragmenter.fragment(handle: 1, channel: .smp, payload: [0x05, 0x05], maximumDataLength: 27)
            == [hexBytes("02 01 00 06 00 02 00 06 00 05 05")])
        #expect(ACLFragmenter.fragment(handle: 1, channel: .att, payload: [UInt8](), maximumDataLength: 27).count == 1)
    }
}

@Suite struct ACLReassemblyTests {
    /// Controller → host packets: the first with PB 0b10, the rest 0b01.
    private func incoming(_ handle: UInt16, _ pieces: [ArraySlice<UInt8>]) -> [ACLPacket] {
        pieces.enumerated().map { k, piece in
            ACLPacket(header: ACLHeader(handle: handle, boundary: k == 0 ? .first : .continuing, length: UInt16(piece.count)), data: piece)
        }
    }

    private func frameBytes(_ channel: L2CAPChannelID, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        L2CAPHeader(length: UInt16(payload.count), channel: channel).append(to: &out)
        return out + payload
    }

    @Test func singlePacketFrameIsNotCopied() throws {
        var reassembler = ACLReassembler()
        let bytes = hexBytes("40 20 07 00 03 00 04 00 0a 01 00")
        let outcome = reassembler.receive(try ACLPacket(decoding: bytes))
        guard case .frame(let frame) = outcome else { Issue.record("\(outcome)"); return }
        #expect(frame.handle == 0x40 && frame.channel == .att && Array(frame.payload) == [0x0A, 0x01, 0x00])
        #expect(frame.payload.startIndex == 8)
    }

    @Test func splitAtEveryByteBoundary() {
        let payload = (0..<40).map { UInt8($0) }
        let frame = frameBytes(.att, payload)
        for split in 0...frame.count {
            var reassembler = ACLReassembler()
            let packets = incoming(7, [frame[..<split], frame[split...]])
            #expect(reassembler.receive(packets[0]) == (split == frame.count ? .frame(L2CAPFrame(handle: 7, channel: .att, payload: payload[...])) : .incomplete))
            if split < frame.count {
                #expect(reassembler.receive(packets[1]) == .frame(L2CAPFrame(handle: 7, channel: .att, payload: payload[...])), "split \(split)")
            }
            #expect(!reassembler.isBuilding(handle: 7))
        }
    }

    @Test func splitIntoThreeAtEveryPairOfBoundaries() {
        let payload: [UInt8] = [0x12, 0x01, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01]
        let frame = frameBytes(.leSignalling, payload)
        for a in 0..<frame.count {
            for b in a..<frame.count {
                var reassembler = ACLReassembler()
                var results: [ACLReassembler.Outcome] = []
                for packet in incoming(1, [frame[..<a], frame[a..<b], frame[b...]]) { results.append(reassembler.receive(packet)) }
                #expect(results == [.incomplete, .incomplete, .frame(L2CAPFrame(handle: 1, channel: .leSignalling, payload: payload[...]))])
                #expect(reassembler.counters == ACLReassembler.Counters())
            }
        }
    }

    @Test func fragmenterOutputReassembles() throws {
        // Host → controller PB 0b00 is accepted as a start, as btvirt forwards it unchanged on some versions.
        for size in [27, 192, 251] {
            let payload = (0..<517).map { UInt8(truncatingIfNeeded: $0) }
            var reassembler = ACLReassembler()
            var frames: [L2CAPFrame] = []
            for packet in ACLFragmenter.fragment(handle: 0x40, channel: .att, payload: payload, maximumDataLength: size) {
                if case .frame(let frame) = reassembler.receive(try ACLPacket(decoding: packet.dropFirst())) { frames.append(frame) }
            }
            #expect(frames == [L2CAPFrame(handle: 0x40, channel: .att, payload: payload[...])])
        }
    }

    @Test func linksAreIndependent() {
        var reassembler = ACLReassembler()
        let a = frameBytes(.att, [1, 2, 3, 4])
        let b = frameBytes(.smp, [0x01, 0x03])
        let pa = incoming(1, [a[..<3], a[3...]])
        let pb = incoming(2, [b[..<5], b[5...]])
        #expect(reassembler.receive(pa[0]) == .incomplete)
        #expect(reassembler.receive(pb[0]) == .incomplete)
        #expect(reassembler.receive(pa[1]) == .frame(L2CAPFrame(handle: 1, channel: .att, payload: [1, 2, 3, 4])))
        #expect(reassembler.receive(pb[1]) == .frame(L2CAPFrame(handle: 2, channel: .smp, payload: [0x01, 0x03])))
    }

    @Test func continuationWithoutStartIsDroppedAndCounted() {
        var reassembler = ACLReassembler()
        let orphan = ACLPacket(header: ACLHeader(handle: 3, boundary: .continuing, length: 2), data: [1, 2])
        #expect(reassembler.receive(orphan) == .dropped(.continuationWithoutStart))
        #expect(reassembler.counters.continuationsWithoutStart == 1)
    }

    @Test func newStartMidFrameDropsTheOldPart() {
        var reassembler = ACLReassembler()
        let first = frameBytes(.att, [UInt8](repeating: 1, count: 10))
        let second = frameBytes(.att, [9, 9])
        #expect(reassembler.receive(incoming(4, [first[..<6]])[0]) == .incomplete)
        #expect(reassembler.receive(incoming(4, [second[...]])[0]) == .frame(L2CAPFrame(handle: 4, channel: .att, payload: [9, 9])))
        #expect(reassembler.counters.interruptedFrames == 1)
        // The rest of the first frame now has no start.
        #expect(reassembler.receive(incoming(4, [[], first[6...]])[1]) == .dropped(.continuationWithoutStart))
    }

    @Test func oversizedFramesAreDroppedWithTheirContinuations() {
        var reassembler = ACLReassembler(maximumPayloadLength: 23)
        let big = frameBytes(.att, [UInt8](repeating: 7, count: 24))
        let packets = incoming(5, [big[..<10], big[10..<20], big[20...]])
        #expect(reassembler.receive(packets[0]) == .dropped(.frameTooLong(length: 24)))
        #expect(reassembler.receive(packets[1]) == .dropped(.continuationWithoutStart))
        #expect(reassembler.receive(packets[2]) == .dropped(.continuationWithoutStart))
        #expect(reassembler.counters.framesTooLong == 1)
        #expect(reassembler.counters.continuationsWithoutStart == 0)
        // A header split before its length is known is checked once complete.
        #expect(reassembler.receive(incoming(5, [big[..<1]])[0]) == .incomplete)
        #expect(reassembler.receive(incoming(5, [[], big[1..<6]])[1]) == .dropped(.frameTooLong(length: 24)))
        // A good frame afterwards is fine.
        let ok = frameBytes(.att, [1])
        #expect(reassembler.receive(incoming(5, [ok[...]])[0]) == .frame(L2CAPFrame(handle: 5, channel: .att, payload: [1])))
    }

    @Test func overrunAndInvalidBoundaryAreDropped() {
        var reassembler = ACLReassembler()
        let frame = frameBytes(.att, [1, 2, 3])
        #expect(reassembler.receive(incoming(6, [(frame + [0xFF])[...]])[0]) == .dropped(.overrun))
        #expect(reassembler.receive(incoming(6, [frame[..<5]])[0]) == .incomplete)
        #expect(reassembler.receive(incoming(6, [[], (Array(frame[5...]) + [0xEE])[...]])[1]) == .dropped(.overrun))
        let complete = ACLPacket(header: ACLHeader(handle: 6, boundary: .complete, length: UInt16(frame.count)), data: frame[...])
        #expect(reassembler.receive(complete) == .dropped(.invalidBoundary(.complete)))
        #expect(reassembler.counters.overruns == 2 && reassembler.counters.invalidBoundaries == 1)
    }

    @Test func removeLinkForgetsHalfBuiltFrames() {
        var reassembler = ACLReassembler()
        let frame = frameBytes(.att, [1, 2, 3])
        #expect(reassembler.receive(incoming(8, [frame[..<5]])[0]) == .incomplete)
        reassembler.removeLink(8)
        #expect(!reassembler.isBuilding(handle: 8))
        #expect(reassembler.receive(incoming(8, [[], frame[5...]])[1]) == .dropped(.continuationWithoutStart))
    }
}
