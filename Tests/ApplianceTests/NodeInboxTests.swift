import BLEHost
import Testing
import VenueNode
@testable import Appliance

/// Issue 15, item 5, the second queue: under an advert flood the node's inbox drops advertising
/// reports only (counted); connections, disconnections, writes, ticks and request results all
/// reach the loop, in order.
@Suite struct NodeInboxTests {
    static func report(_ n: Int) -> NodeLoop.Input {
        .host(.advertisingReport(LEAdvertisingReport(
            eventType: .connectableUndirected, addressType: .random, address: BluetoothAddress(rawValue: 0xC000_0000_0000 | UInt64(n)),
            data: [0x02, 0x01, 0x06][...], rawRSSI: -60)))
    }

    static func link(_ handle: UInt16) -> HostLink {
        HostLink(handle: handle, peerAddress: BluetoothAddress(rawValue: 0xC100_0000_0000 | UInt64(handle)), peerAddressType: .random, role: .peripheral)
    }

    @Test func anAdvertFloodWhileLinksComeAndGoDropsOnlyAdverts() async {
        let inbox = NodeInbox()
        var expected: [String] = []
        var n = 0
        for round in 0..<100 {
            for _ in 0..<(NodeInbox.reportCapacity / 10) {
                inbox.push(Self.report(n))
                n += 1
            }
            let handle = UInt16(round % 4)
            if round % 8 < 4 {
                inbox.push(.host(.connected(Self.link(handle))))
                expected.append("opened \(handle)")
            } else {
                inbox.push(.host(.disconnected(Self.link(handle), reason: .remoteUserTerminated)))
                expected.append("closed \(handle)")
            }
            inbox.push(.tick(NodeLoop.Tick(wall: Double(round))))
            expected.append("tick \(round)")
        }
        inbox.finish()
        var seen: [String] = []
        var reports = 0
        while let batch = await inbox.next() {
            for input in batch {
                switch input {
                case .host(.connected(let link)): seen.append("opened \(link.handle)")
                case .host(.disconnected(let link, _)): seen.append("closed \(link.handle)")
                case .host(.advertisingReport): reports += 1
                case .tick(let tick): seen.append("tick \(Int(tick.wall))")
                default: break
                }
            }
        }
        #expect(seen == expected)
        #expect(inbox.dropped > 0 && reports + inbox.dropped == n)
        #expect(reports <= NodeInbox.reportCapacity)
    }
}
