import Testing
@testable import BLEHost

/// The link manager's other small machines alone: `Advertiser`, `Scanner`, `LinkTable`,
/// `HealthProbe`, `RadioSequencer`.
@Suite struct LinkManagerMachineTests {
    let t0 = ContinuousClock.now

    func advertising(scanResponse: Bool) throws -> AdvertisingConfiguration {
        var builder = AdvertisingDataBuilder()
        builder.appendFlags(.generalDiscoverableLEOnly)
        return AdvertisingConfiguration(
            data: try builder.build(), scanResponse: scanResponse ? try AdvertisingPayload([0x02, 0x09, 0x56]) : .empty)
    }

    /// Runs a machine's commands to completion with `status`, returning their steps.
    func steps(_ next: () -> LinkManager.RadioCommand?, _ complete: (LinkManager.RadioStep) -> Bool) -> [LinkManager.RadioStep] {
        var steps: [LinkManager.RadioStep] = []
        while let command = next(), steps.count < 10 {
            steps.append(command.step)
            #expect(!complete(command.step))
        }
        return steps
    }

    @Test func theAdvertiserGoesThroughItsStepsAndStopsTakingConnectionsAtTheCap() throws {
        var a = LinkManager.Advertiser()
        #expect(a.nextCommand(acceptsConnections: true) == nil)
        #expect(a.want(try advertising(scanResponse: true)))
        #expect(!a.want(try advertising(scanResponse: true)))
        let all = steps({ a.nextCommand(acceptsConnections: true) }, { a.completed($0, status: .success) })
        #expect(all == [.advertisingDisable, .advertisingParameters, .advertisingData, .scanResponseData, .advertisingEnable])
        #expect(a.isAdvertising && a.takesConnections)
        // At the cap: the same advert without connections, data not sent again.
        let capped = steps({ a.nextCommand(acceptsConnections: false) }, { a.completed($0, status: .success) })
        #expect(capped == [.advertisingDisable, .advertisingParameters, .advertisingEnable])
        #expect(a.parametersSet?.type == .scannableUndirected && a.parametersSet?.intervalMin == 0x00A0 && !a.takesConnections)
        a.ended()
        #expect(!a.isAdvertising)
    }

    @Test func theAdvertiserCountsEnablingWhatIsOnAsDoneAndRetriesOtherFailures() throws {
        var a = LinkManager.Advertiser()
        _ = a.want(try advertising(scanResponse: false))
        #expect(a.parameters(acceptsConnections: false)?.type == .nonConnectableUndirected)
        #expect(!a.completed(.advertisingEnable, status: .commandDisallowed) && a.isAdvertising)
        let failed = a.completed(.advertisingData, status: .commandDisallowed)
        #expect(failed)
        #expect(a.nextCommand(acceptsConnections: true)?.step == .advertisingDisable)
        a.reset()
        #expect(!a.isAdvertising && a.parametersSet == nil && a.desired != nil)
    }

    @Test func theScannerReassertsAndStopsWhenNotAllowed() {
        var s = LinkManager.Scanner()
        let wanted = s.want(LESetScanParameters())
        #expect(wanted)
        let all = steps({ s.nextCommand(allowed: true) }, { s.completed($0, status: .success) })
        #expect(all == [.scanDisable, .scanParameters, .scanEnable] && s.isScanning)
        #expect(s.nextCommand(allowed: false)?.step == .scanDisable)
        s.reassert()
        #expect(steps({ s.nextCommand(allowed: true) }, { s.completed($0, status: .success) }) == [.scanDisable, .scanParameters, .scanEnable])
        #expect(!s.completed(.scanEnable, status: .commandDisallowed) && s.isScanning)
        let unwanted = s.want(nil)
        #expect(unwanted)
        #expect(s.nextCommand(allowed: true)?.step == .scanDisable)
    }

    @Test func theLinkTableCountsRefusedLinksAgainstTheCap() {
        var table = LinkManager.LinkTable(maximum: 2)
        let link = LELink(
            handle: 0x41, role: .peripheral, peerAddress: BluetoothAddress("5A:11:22:33:44:55")!, peerAddressType: .random,
            interval: 24, latency: 0, supervisionTimeout: 72)
        table.add(link)
        #expect(!table.isFull(adding: 0) && table.isFull(adding: 1) && table.free == 1)
        table.refuse(LELink(
            handle: 0x40, role: .peripheral, peerAddress: BluetoothAddress("6B:11:22:33:44:66")!, peerAddressType: .random,
            interval: 24, latency: 0, supervisionTimeout: 72))
        #expect(table.isFull(adding: 0) && table.links.count == 1 && table.hasLink(to: link.peerAddress))
        #expect(table.update(0x41, interval: 40, latency: 1, supervisionTimeout: 100)?.interval == 40)
        #expect(table.update(0x40, interval: 40, latency: 1, supervisionTimeout: 100) == nil)
        #expect(table.removeRefused(0x40) && !table.removeRefused(0x40))
        #expect(table.removeAll().map(\.handle) == [0x41] && table.occupied == 0)
    }

    @Test func theHealthProbeWaitsForSilenceAndOneProbeAtATime() throws {
        var probe = LinkManager.HealthProbe(silence: .seconds(60))
        #expect(probe.deadline == nil && probe.probeIfDue(now: t0 + .seconds(100)) == nil)
        probe.heard(at: t0)
        #expect(probe.deadline == t0 + .seconds(60))
        #expect(probe.probeIfDue(now: t0 + .seconds(59)) == nil)
        let due = probe.probeIfDue(now: t0 + .seconds(60))
        let command = try #require(due)
        #expect(command.opcode == .readLocalVersionInformation && probe.deadline == nil)
        probe.heard(at: t0 + .seconds(61))
        #expect(probe.deadline == nil && probe.probeIfDue(now: t0 + .seconds(200)) == nil)
        probe.probeEnded()
        #expect(probe.deadline == t0 + .seconds(121))
        probe.stop()
        #expect(probe.deadline == nil)
    }

    @Test func theSequencerRunsOneCommandAtATimeAndBacksOff() throws {
        var sequencer = LinkManager.RadioSequencer(retryDelay: .seconds(1), randomAddress: BluetoothAddress("C0:11:22:33:44:55")!)
        let address = try #require(sequencer.addressCommand)
        #expect(address.step == .setRandomAddress && sequencer.mayStart(now: t0))
        sequencer.sent(address)
        let mayStartWhileBusy = sequencer.mayStart(now: t0)
        #expect(!mayStartWhileBusy)
        sequencer.ended(.setRandomAddress)
        let addressFailed = sequencer.addressCompleted(status: .success)
        #expect(!addressFailed)
        #expect(sequencer.addressCommand == nil)
        sequencer.sent(LinkManager.RadioCommand(LECreateConnectionCancel(), .cancelConnection, exclusive: false))
        #expect(sequencer.busy == nil)
        var delays: [Duration] = []
        for _ in 0..<8 {
            sequencer.backOff(now: t0)
            delays.append(try #require(sequencer.retryAt) - t0)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 64, 64].map { Duration.seconds($0) })
        #expect(!sequencer.mayStart(now: t0 + .seconds(63)) && sequencer.mayStart(now: t0 + .seconds(64)) && sequencer.retryAt == nil)
        sequencer.succeeded()
        sequencer.backOff(now: t0)
        #expect(sequencer.retryAt == t0 + .seconds(1))
        sequencer.reset()
        #expect(sequencer.addressCommand != nil && sequencer.retryAt == nil)
    }
}
