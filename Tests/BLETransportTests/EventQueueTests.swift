import BLEHost
import Testing
@testable import BLETransport

@Suite struct EventQueueTests {
    @Test func keepsTheNewestAndCountsDropsByKind() async {
        let queue = EventQueue<Int>(capacity: 3) { $0 % 2 == 0 ? "even" : "odd" }
        for n in 1...6 { queue.push(n) }
        queue.finish()
        var got: [Int] = []
        for await n in queue { got.append(n) }
        #expect(got == [4, 5, 6])
        #expect(queue.droppedCounts == ["odd": 2, "even": 1])
        queue.push(7)
        #expect(queue.droppedCounts["odd"] == 3)
    }
}

/// Issue 15, item 5: under an advert flood the host's queue drops advertising reports only;
/// every connection, disconnection and GATT write reaches the consumer, in order, so its view of
/// the links stays right.
@Suite struct EventQueueFloodTests {
    static func report(_ n: Int) -> HostEvent {
        let address = BluetoothAddress(rawValue: 0xC000_0000_0000 | UInt64(n))
        return .advertisingReport(
            LEAdvertisingReport(eventType: .connectableUndirected, addressType: .random, address: address, data: [0x02, 0x01, 0x06][...], rawRSSI: -60))
    }

    static func link(_ handle: UInt16) -> HostLink {
        HostLink(handle: handle, peerAddress: BluetoothAddress(rawValue: 0xC100_0000_0000 | UInt64(handle)), peerAddressType: .random, role: .peripheral)
    }

    @Test func anAdvertFloodWhileLinksComeAndGoDropsOnlyAdverts() async throws {
        let database = try GATTDatabase(deviceName: "flood", services: [])
        let host = BluetoothHost(
            device: try HCITransportSpec("unix:/nonexistent"),
            configuration: HostConfiguration(database: database),
            options: .init(eventCapacity: 64))
        let queue = host.events
        // What the producer says happened to the links, in order (adverts aside).
        var expected: [String] = []
        var open: Set<UInt16> = []
        var n = 0
        // The consumer is stalled while 20,000 adverts arrive, with links opening and closing and
        // writes arriving among them; then it catches up.
        for round in 0..<200 {
            for _ in 0..<100 {
                queue.push(Self.report(n))
                n += 1
            }
            let handle = UInt16(round % 5)
            if open.contains(handle) {
                queue.push(.disconnected(Self.link(handle), reason: .remoteUserTerminated))
                expected.append("closed \(handle)")
                open.remove(handle)
            } else {
                queue.push(.connected(Self.link(handle)))
                expected.append("opened \(handle)")
                open.insert(handle)
                let write = GATTWrite(
                    link: handle, characteristic: database.characteristics[0], value: [0x02, 0xC4, 0xFF], withResponse: true)
                queue.push(.gattWrite(write))
                expected.append("write \(handle)")
            }
        }
        queue.finish()
        var seen: [String] = []
        var reports = 0
        var view: Set<UInt16> = []
        for await event in queue {
            switch event {
            case .connected(let link):
                seen.append("opened \(link.handle)")
                view.insert(link.handle)
            case .disconnected(let link, _):
                seen.append("closed \(link.handle)")
                view.remove(link.handle)
            case .gattWrite(let write): seen.append("write \(write.link)")
            case .advertisingReport: reports += 1
            default: break
            }
        }
        #expect(seen == expected)
        #expect(view == open)
        let dropped = queue.droppedCounts
        #expect(Set(dropped.keys).isSubset(of: ["advertising report"]), "\(dropped)")
        #expect(reports + (dropped["advertising report"] ?? 0) == n)
        #expect(reports > 0 && reports <= 64)
    }
}
