import Testing
@testable import BLEHost

/// The controller's health as the link manager sees it: silence probed, an unanswered probe,
/// timeouts and hardware errors asking for a reset, a restart re-applying what was wanted.
extension LinkManagerTests {
    @Test func silenceIsProbedNeverAFault() {
        var h = LinkHarness.ready(LinkManager.Configuration(silenceBeforeProbe: .seconds(60)))
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.clear()
        // A night of silence, ticking every 10 s: the controller answers every probe.
        h.run(for: .seconds(8 * 3600), step: .seconds(10))
        #expect(resets(h.reported).isEmpty)
        let probes = h.sent.filter { $0 == .readLocalVersionInformation }.count
        #expect(probes >= 8 * 60 - 1 && probes <= 8 * 60)
        // Scanning is re-asserted with every probe.
        #expect(h.sent.prefix(4) == [.readLocalVersionInformation] + ArraySlice(Self.scanSequence))
        #expect(h.manager.isScanning)
    }

    @Test func unansweredProbeAsksForAReset() {
        var h = LinkHarness.ready(LinkManager.Configuration(commandTimeout: .seconds(3), silenceBeforeProbe: .seconds(60)))
        h.inject(h.controller.peerConnects(handle: 0x44, peer: phone))
        h.clear()
        h.controller.answering = false
        h.advance(.seconds(59))
        #expect(h.sent.isEmpty)
        h.advance(.seconds(1))
        #expect(h.sent == [.readLocalVersionInformation])
        h.advance(.seconds(2))
        #expect(resets(h.reported).isEmpty)
        h.advance(.seconds(1))
        #expect(resets(h.reported) == [.commandTimeout(.readLocalVersionInformation)])
        guard case .connectionClosed(let link, .localHostTerminated) = h.reported.first else { Issue.record("\(h.reported)"); return }
        #expect(link.handle == 0x44)
        #expect(h.manager.links.isEmpty && h.manager.controllerInfo == nil)
        // The owner reopens and starts again: everything comes back.
        h.controller.answering = true
        h.clear()
        h.perform { $0.start(now: $1, into: &$2) }
        #expect(h.manager.controllerInfo != nil)
    }

    @Test func anyEventCountsAsLife() {
        var h = LinkHarness.ready(LinkManager.Configuration(silenceBeforeProbe: .seconds(60)))
        h.clear()
        for _ in 0..<10 {
            h.now = h.now + .seconds(50)
            h.inject(hexBytes("3e 0c 02 01 03 01 66 55 44 33 22 11 00 c4"))
            h.advance(.zero)
        }
        #expect(!h.sent.contains(.readLocalVersionInformation))
    }

    @Test func commandTimeoutAndHardwareErrorAskForAReset() throws {
        var h = LinkHarness.ready()
        h.controller.answering = false
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.advance(.seconds(3))
        #expect(resets(h.reported) == [.commandTimeout(.leSetScanEnable)])
        #expect(h.manager.nextDeadline == nil)

        var g = LinkHarness.ready()
        g.controller.connectBehaviour = .never
        g.perform { $0.connect(to: phone, addressType: .random, now: $1, into: &$2) }
        g.clear()
        g.inject(hexBytes("10 01 42"))
        #expect(g.reported == [
            .connectionFailed(peer: phone, addressType: .random, status: .localHostTerminated), .resetController(.hardwareError(code: 0x42)),
        ])
    }

    @Test func restartReappliesTheDesiredState() throws {
        var h = LinkHarness.ready()
        h.perform { $0.setAdvertising(try? advertising, now: $1, into: &$2) }
        h.perform { $0.setScanning(scan, now: $1, into: &$2) }
        h.perform { $0.start(now: $1, into: &$2) }
        h.clear()
        h.perform { $0.start(now: $1, into: &$2) }
        #expect(Array(h.sent.suffix(8)) == Self.scanSequence + Self.advertisingSequence)
        #expect(h.manager.isAdvertising && h.manager.isScanning)
    }

    @Test func initFailureIsReported() {
        var h = LinkHarness()
        h.controller.forced[.leSetEventMask] = .unknownCommand
        h.perform { $0.start(now: $1, into: &$2) }
        #expect(h.reported == [.initializationFailed(ControllerInitializer.Failure(opcode: .leSetEventMask, error: .failed(.unknownCommand)))])
        #expect(h.manager.controllerInfo == nil)
    }
}

@Suite struct LinkManagerStoppedTests {
    @Test func eventsBeforeStartAreIgnored() {
        var h = LinkHarness()
        h.inject(FakeController.connectionComplete(handle: 0x40, role: .peripheral, peer: BluetoothAddress(rawValue: 1), type: .public))
        h.inject(hexBytes("10 01 01"))
        #expect(h.reported.isEmpty && h.manager.links.isEmpty && h.sent.isEmpty)
    }
}
