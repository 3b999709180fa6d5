import BLEHost
import Testing

@testable import Herald

/// Signal writes from phones that connect to the node: RSSI, payloads, shared payloads.
@Suite struct SensorNodeSignalWriteTests {
    @Test func aPhoneThatOnlyWritesIsRecorded() throws {
        var h = NodeHarness()
        let first = h.write(.payload(phone1), from: 7, at: 0)
        let target = try #require(first.detects.first)
        #expect(first.reads.map(\.0) == [SensorPayload(kind: .herald, bytes: phone1)])
        #expect(first.reads.first?.1 == [])
        #expect(first.measures.map(\.2) == [SensorPayload(kind: .herald, bytes: phone1)])

        let rssi = h.write(.rssi(-58), from: 7, at: 1)
        #expect(rssi.measures.count == 1)
        #expect(rssi.measures[0].0 == target.id && rssi.measures[0].1 == -58)
        #expect(rssi.measures[0].2?.bytes == phone1)
        #expect(h.tick(2).isEmpty)  // a writer is never connected to
    }

    @Test func rssiWrittenBeforeThePayloadIsAttributed() throws {
        var h = NodeHarness()
        _ = h.write(.rssi(-70), from: 7, at: 0)
        _ = h.write(.wake, from: 7, at: 1)
        let read = h.write(.payload(phone1), from: 7, at: 2)
        #expect(read.reads.first?.1 == [.init(time: 0, rssi: -70), .init(time: 1, rssi: nil)])
    }

    @Test func payloadSharingIsSplitByTheWritersLength() throws {
        var h = NodeHarness()
        _ = h.write(.payload(phone1), from: 7, at: 0)
        let share = h.write(.payloadSharing(rssi: -66, payloads: phone2 + phone3), from: 7, at: 1)
        let shared = share.events.compactMap { event -> [SensorPayload]? in
            if case .share(_, let payloads, let rssi, _) = event, rssi == -66 { return payloads } else { return nil }
        }
        #expect(shared == [[SensorPayload(kind: .herald, bytes: phone2), SensorPayload(kind: .herald, bytes: phone3)]])
        #expect(share.measures.first?.1 == -66)

        _ = h.write(.payloadSharing(rssi: -66, payloads: [0x30, 1, 2, 3, 4]), from: 8, at: 2)
        #expect(h.node.counters.sharesUnsplittable == 1)
    }

    @Test func immediateUnknownAndRejectedWrites() {
        var h = NodeHarness()
        let immediate = h.write(.immediate([0x68, 0x69]), from: 7, at: 0)
        #expect(immediate.contains { $0 == .immediateData(immediate.detects[0], [0x68, 0x69]) })
        _ = h.write(.unknown(action: SignalAction(rawValue: 9), data: []), from: 7, at: 1)
        h.node.signalWriteRejected()
        #expect(h.node.counters.signalWrites == 2)
        #expect(h.node.counters.signalWritesUnknown == 1)
        #expect(h.node.counters.signalWritesRejected == 1)
    }

    @Test func aWriterSeenAdvertisingLaterIsTheSameTarget() throws {
        var h = NodeHarness()
        let target = try #require(h.write(.payload(phone1), from: 7, at: 0).detects.first)
        let advert = h.advert(7, .herald(pseudoAddress: nil, apple: false), at: 1)
        #expect(advert.detects.isEmpty)
        #expect(advert.measures.first?.0 == target.id)
        #expect(h.tick(1).isEmpty)  // payload already known
    }
}
