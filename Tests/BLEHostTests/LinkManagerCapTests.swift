import Testing
@testable import BLEHost

/// The connection cap counts our own attempt: advertising stops taking connections (but stays
/// on the air) whenever an attempt or a new link could fill the last link, and a peer that
/// connects beyond the cap all the same is disconnected.
@Suite struct LinkManagerCapTests {
    let phone = BluetoothAddress("5A:11:22:33:44:55")!
    let other = BluetoothAddress("6B:11:22:33:44:66")!

    func advertising(scanResponse: Bool = false) throws -> AdvertisingConfiguration {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        builder.appendServiceUUIDs([BluetoothUUID(0xFCF6 as UInt16)])
        return AdvertisingConfiguration(
            data: try builder.build(), scanResponse: scanResponse ? try AdvertisingPayload(hexBytes("06 09 56 65 6e 75 65")) : .empty)
    }

    /// Ready with advertising on and `cap` links at most; no scanning, so the command sequences
    /// are only the advertising and connection ones.
    func harness(cap: Int, scanResponse: Bool = false) throws -> LinkHarness {
        var h = LinkHarness.ready(LinkManager.Configuration(connectTimeout: .seconds(2), maximumConnections: cap))
        let advertising = try advertising(scanResponse: scanResponse)
        h.perform { $0.setAdvertising(advertising, now: $1, into: &$2) }
        #expect(h.controller.takesConnections)
        h.clear()
        return h
    }

    /// The last LE Set Advertising Parameters the controller accepted, decoded.
    func lastParameters(_ h: LinkHarness) throws -> LESetAdvertisingParameters {
        let command = try #require(h.controller.received.last { $0.opcode == .leSetAdvertisingParameters })
        return try LESetAdvertisingParameters(parameters: command.parameters[...])
    }

    static let switchToOtherType: [HCIOpcode] = [.leSetAdvertisingEnable, .leSetAdvertisingParameters, .leSetAdvertisingEnable]

    @Test func atTheCapTheAdvertStaysOnTheAirWithoutConnections() throws {
        var h = try harness(cap: 1, scanResponse: true)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        // Advertising stopped with the connection: new parameters (no disable needed), enable.
        #expect(h.sent == [.leSetAdvertisingParameters, .leSetAdvertisingEnable])
        #expect(h.controller.advertising && !h.controller.takesConnections)
        #expect(h.controller.advertisingType == .scannableUndirected)  // the scan response still answers
        #expect(h.manager.isAdvertising && !h.manager.acceptsConnections)
        // The data was not sent again: the advert is the same.
        #expect(!h.sent.contains(.leSetAdvertisingData))
        h.clear()
        h.inject(FakeController.disconnectionComplete(handle: 0x41, reason: .remoteUserTerminated))
        #expect(h.sent == Self.switchToOtherType)
        #expect(h.controller.takesConnections && h.manager.acceptsConnections)
        #expect(try lastParameters(h) == LESetAdvertisingParameters())
    }

    @Test func withoutAScanResponseTheAdvertBecomesNonConnectableWithALegalInterval() throws {
        var h = LinkHarness.ready(LinkManager.Configuration(maximumConnections: 1))
        var fast = try advertising()
        fast.parameters.intervalMin = 0x0020  // 20 ms: fine for ADV_IND, not for ADV_NONCONN_IND on 4.x
        fast.parameters.intervalMax = 0x0030
        h.perform { $0.setAdvertising(fast, now: $1, into: &$2) }
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        let parameters = try lastParameters(h)
        #expect(parameters.type == .nonConnectableUndirected)
        #expect(parameters.intervalMin == 0x00A0 && parameters.intervalMax == 0x00A0)
        #expect(h.controller.advertising)
    }

    @Test func directedAdvertisingStopsAtTheCap() throws {
        var h = LinkHarness.ready(LinkManager.Configuration(maximumConnections: 1))
        var directed = try advertising()
        directed.parameters.type = .connectableDirectedLowDuty
        h.perform { $0.setAdvertising(directed, now: $1, into: &$2) }
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        #expect(!h.controller.advertising && !h.manager.isAdvertising)
        h.clear()
        h.inject(FakeController.disconnectionComplete(handle: 0x41, reason: .remoteUserTerminated))
        #expect(h.sent == [.leSetAdvertisingEnable] && h.controller.takesConnections)
    }

    @Test func anAttemptThatCouldFillTheLastLinkFirstStopsConnectionsAndTheyReturnWhenItFails() throws {
        var h = try harness(cap: 2)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        #expect(h.controller.takesConnections)  // one link of two: phones are welcome
        h.clear()
        h.controller.connectBehaviour = .never
        h.perform { $0.connect(to: other, addressType: .random, now: $1, into: &$2) }
        // Advertising is disabled before the attempt starts, and comes back without connections.
        #expect(h.sent == [.leSetAdvertisingEnable, .leCreateConnection, .leSetAdvertisingParameters, .leSetAdvertisingEnable])
        #expect(h.manager.isInitiating && h.controller.advertising && !h.controller.takesConnections)
        #expect(try lastParameters(h).type == .nonConnectableUndirected)
        h.clear()
        // The attempt times out: connections are taken again.
        h.advance(.seconds(2))
        #expect(h.sent == [.leCreateConnectionCancel] + Self.switchToOtherType)
        #expect(h.reported == [.connectionFailed(peer: other, addressType: .random, status: .connectionTimeout)])
        #expect(h.controller.takesConnections && h.manager.acceptsConnections)
    }

    @Test func aSucceededAttemptKeepsConnectionsOutUntilALinkCloses() throws {
        var h = try harness(cap: 2)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        h.controller.connectBehaviour = .connect(handle: 0x42)
        h.perform { $0.connect(to: other, addressType: .random, now: $1, into: &$2) }
        #expect(h.manager.links.count == 2 && !h.controller.takesConnections && h.controller.advertising)
        h.clear()
        h.perform { $0.disconnect(handle: 0x42, now: $1, into: &$2) }
        #expect(h.sent == [.disconnect] + Self.switchToOtherType)
        #expect(h.controller.takesConnections)
    }

    @Test func anAttemptUnderTheCapLeavesAdvertisingAlone() throws {
        var h = try harness(cap: 3)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        h.clear()
        h.controller.connectBehaviour = .never
        h.perform { $0.connect(to: other, addressType: .random, now: $1, into: &$2) }
        #expect(h.sent == [.leCreateConnection])
        #expect(h.controller.takesConnections)  // two of three taken at most
    }

    @Test func aPeerConnectingWhileOurAttemptHoldsTheLastLinkIsDisconnected() throws {
        var h = try harness(cap: 2)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        h.controller.connectBehaviour = .never
        h.perform { $0.connect(to: other, addressType: .random, now: $1, into: &$2) }
        h.clear()
        // The controller accepted a connection before it heard advertising change (a race).
        let late = BluetoothAddress("7C:11:22:33:44:77")!
        h.inject(h.controller.peerConnects(handle: 0x43, peer: late))
        guard case .connectionRefused(let refused) = h.reported.first else { Issue.record("\(h.reported)"); return }
        #expect(refused.handle == 0x43 && refused.peerAddress == late && refused.role == .peripheral)
        #expect(h.reported.count == 1)  // neither opened nor closed
        let disconnect = try #require(h.controller.received.last { $0.opcode == .disconnect })
        #expect(disconnect.parameters == [0x43, 0x00, HCIStatus.remoteLowResources.rawValue])
        #expect(h.manager.links.keys.sorted() == [0x41])
        // Disconnected (the fake answers at once): advertising back without connections.
        #expect(h.manager.refusedLinks.isEmpty)
        #expect(h.controller.advertising && !h.controller.takesConnections)
        // The attempt still gets the last link.
        h.clear()
        h.controller.initiating = nil
        h.inject(FakeController.connectionComplete(handle: 0x44, role: .central, peer: other, type: .random))
        #expect(h.manager.links.count == 2)
        guard case .connectionOpened(let link) = h.reported.first else { Issue.record("\(h.reported)"); return }
        #expect(link.handle == 0x44)
    }

    @Test func aRefusedLinkCountsUntilItsDisconnectionCompletes() throws {
        var h = try harness(cap: 1)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        h.controller.forced[.disconnect] = .success  // Command Status only: the link lingers
        h.clear()
        h.inject(h.controller.peerConnects(handle: 0x42, peer: other))
        #expect(h.manager.refusedLinks.keys.sorted() == [0x42])
        // The first link closes; the refused one still holds a slot.
        h.inject(FakeController.disconnectionComplete(handle: 0x41, reason: .remoteUserTerminated))
        #expect(h.manager.links.isEmpty && !h.manager.acceptsConnections && !h.controller.takesConnections)
        h.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        #expect(h.reported.last == .connectionFailed(peer: phone, addressType: .random, status: .connectionLimitExceeded))
        h.clear()
        h.inject(FakeController.disconnectionComplete(handle: 0x42, reason: .localHostTerminated))
        #expect(h.reported.isEmpty)  // never reported opened, so never closed
        #expect(h.manager.refusedLinks.isEmpty && h.controller.takesConnections)
    }

    @Test func aRefusedLinkTheControllerNoLongerKnowsIsForgotten() throws {
        var h = try harness(cap: 1)
        h.inject(h.controller.peerConnects(handle: 0x41, peer: phone))
        h.controller.forced[.disconnect] = .unknownConnectionIdentifier
        h.clear()
        h.inject(h.controller.peerConnects(handle: 0x42, peer: other))
        #expect(h.manager.refusedLinks.isEmpty && h.manager.links.keys.sorted() == [0x41])
        #expect(!h.reported.contains { if case .connectionClosed = $0 { true } else { false } })
    }

    /// Random events against a cap of 3: links, attempts that succeed, fail or time out, phones
    /// that connect when advertising lets them and some that race it, disconnections either way.
    /// The host never holds more links than the cap, and the controller never takes a
    /// connection while links and our attempt fill the cap.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func theCapHoldsInRandomSequences(seed: UInt64) throws {
        let cap = 3
        var random = SplitMix64(seed: seed)
        var h = LinkHarness.ready(LinkManager.Configuration(connectTimeout: .seconds(2), maximumConnections: cap))
        let advertising = try advertising(scanResponse: seed.isMultiple(of: 2))
        h.perform { $0.setAdvertising(advertising, now: $1, into: &$2) }
        h.perform { $0.setScanning(LESetScanParameters(), now: $1, into: &$2) }
        h.controller.connectBehaviour = .never
        var nextHandle: UInt16 = 0x40
        var nextPeer: UInt8 = 0
        var open: Set<UInt16> = []
        var mostOpen = 0
        var refused = 0
        func newPeer() -> BluetoothAddress {
            nextPeer &+= 1
            return BluetoothAddress(littleEndianBytes: [nextPeer, seed.low8, 0, 0, 0, 0x5A])
        }

        for _ in 0..<2_000 {
            switch random.next() % 10 {
            case 0, 1:
                let peer = newPeer()
                h.perform { $0.connect(to: peer, addressType: .random, now: $1, into: &$2) }
            case 2:
                if let (peer, type) = h.controller.initiating {
                    h.controller.initiating = nil
                    nextHandle += 1
                    h.inject(FakeController.connectionComplete(handle: nextHandle, role: .central, peer: peer, type: type))
                }
            case 3:
                if let (peer, type) = h.controller.initiating {
                    h.controller.initiating = nil
                    h.inject(FakeController.connectionComplete(status: .connectionFailedToBeEstablished, handle: 0, role: .central, peer: peer, type: type))
                }
            case 4, 5:
                if h.controller.takesConnections {
                    nextHandle += 1
                    h.inject(h.controller.peerConnects(handle: nextHandle, peer: newPeer()))
                }
            case 6:
                // A race: a connection the controller accepted before it heard of the change.
                if random.next() % 4 == 0 {
                    nextHandle += 1
                    h.inject(h.controller.peerConnects(handle: nextHandle, peer: newPeer()))
                }
            case 7:
                if let handle = h.manager.links.keys.sorted().randomElement(using: &random) {
                    h.perform { $0.disconnect(handle: handle, now: $1, into: &$2) }
                }
            case 8:
                if let handle = h.manager.links.keys.sorted().randomElement(using: &random) {
                    h.inject(FakeController.disconnectionComplete(handle: handle, reason: .remoteUserTerminated))
                }
            default:
                h.advance(.milliseconds(500))
            }
            for action in h.reported {
                switch action {
                case .connectionOpened(let link): open.insert(link.handle)
                case .connectionClosed(let link, _): open.remove(link.handle)
                case .connectionRefused(let link):
                    refused += 1
                    #expect(!open.contains(link.handle))
                default: break
                }
            }
            h.clear()
            mostOpen = max(mostOpen, open.count)
            #expect(open.count <= cap && h.manager.links.count <= cap)
            #expect(Set(h.manager.links.keys) == open)
            if h.controller.takesConnections {
                #expect(h.manager.links.count + h.manager.refusedLinks.count + (h.controller.initiating == nil ? 0 : 1) < cap)
            }
        }
        // The sequence did reach the cap, and raced it.
        #expect(mostOpen == cap)
        #expect(refused > 0)
    }
}

extension UInt64 {
    fileprivate var low8: UInt8 { UInt8(truncatingIfNeeded: self) }
}
