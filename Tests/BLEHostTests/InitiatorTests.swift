import Testing
@testable import BLEHost

/// `LinkManager.Initiator` alone: attempts one at a time, one deadline each, and scanning off
/// for every attempt once the controller refused one while scanning.
@Suite struct InitiatorTests {
    let t0 = ContinuousClock.now
    let configuration = LinkManager.Configuration(commandTimeout: .seconds(3))
    let phone = LinkManager.Peer(address: BluetoothAddress("5A:11:22:33:44:55")!, type: .random)
    let other = LinkManager.Peer(address: BluetoothAddress("6B:11:22:33:44:66")!, type: .public)

    func initiator(_ peers: LinkManager.Peer..., deadline: Duration = .seconds(4)) -> LinkManager.Initiator {
        var initiator = LinkManager.Initiator(configuration: configuration)
        for peer in peers { initiator.enqueue(LinkManager.Attempt(peer: peer, deadline: t0 + deadline)) }
        return initiator
    }

    func created(_ step: LinkManager.Initiator.Step) -> LinkManager.RadioCommand? {
        if case .create(let command) = step { return command }
        return nil
    }

    @Test func attemptsRunOneAtATime() throws {
        var i = initiator(phone, other)
        #expect(i.attemptCount == 2 && i.hasAttempt && !i.isActive)
        let command = try #require(created(i.next(freeLinks: 4, advertisingTakesConnections: true, isScanning: false, scansWhileInitiating: false)))
        #expect(command.step == .createConnection && command.exclusive && command.packet.opcode == .leCreateConnection)
        #expect(i.peer == phone && i.isActive && i.attemptCount == 2)
        #expect(i.isConnecting(to: phone) && i.isConnecting(to: other))
        guard case .none = i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: false, scansWhileInitiating: false) else {
            Issue.record("a second attempt started while one runs")
            return
        }
        i.connected()
        #expect(!i.isActive && i.peer == nil && i.queue.map(\.peer) == [other])
    }

    @Test func atTheCapQueuedAttemptsAreRefusedAndTheLastLinkWaitsForAdvertising() {
        var i = initiator(phone, other)
        guard case .none = i.next(freeLinks: 1, advertisingTakesConnections: true, isScanning: false, scansWhileInitiating: false) else {
            Issue.record("the attempt that fills the last link started while advertising takes connections")
            return
        }
        guard case .refused(let refused) = i.next(freeLinks: 0, advertisingTakesConnections: false, isScanning: false, scansWhileInitiating: false)
        else {
            Issue.record("no refusal at the cap")
            return
        }
        #expect(refused.map(\.peer) == [phone, other] && !i.hasAttempt)
    }

    @Test func scanningStopsFirstUnlessTheControllerScansWhileInitiating() throws {
        var i = initiator(phone)
        guard case .stopScanning = i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: true, scansWhileInitiating: false) else {
            Issue.record("scanning was not stopped first")
            return
        }
        #expect(!i.isActive)
        _ = try #require(created(i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: true, scansWhileInitiating: true)))
        guard case .creating(_, whileScanning: true) = i.state else {
            Issue.record("not created while scanning")
            return
        }
    }

    @Test func aRefusalWhileScanningPutsTheAttemptBackAndScanningStopsForEveryAttempt() throws {
        var i = initiator(phone, other)
        _ = try #require(created(i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: true, scansWhileInitiating: true)))
        #expect(i.createRefused(status: .commandDisallowed) == nil)
        #expect(!i.isActive && i.queue.map(\.peer) == [phone, other])
        guard case .offForEachAttempt = i.scanning else {
            Issue.record("scanning may still stay on")
            return
        }
        // Kept across a controller reset: it is the controller's.
        #expect(i.removeAll() == [phone, other])
        guard case .offForEachAttempt = i.scanning else {
            Issue.record("forgotten at reset")
            return
        }
    }

    @Test func aRefusalWithoutScanningEndsTheAttempt() throws {
        var i = initiator(phone)
        _ = try #require(created(i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: false, scansWhileInitiating: false)))
        #expect(i.createRefused(status: .commandDisallowed) == phone)
        #expect(!i.hasAttempt)
        guard case .asSupportedStatesSay = i.scanning else {
            Issue.record("a refusal without scanning changed the scanning policy")
            return
        }
    }

    @Test func theRunningAttemptIsCancelledAtItsOneDeadline() throws {
        var i = initiator(phone)
        _ = try #require(created(i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: false, scansWhileInitiating: false)))
        #expect(i.nextDeadline == t0 + .seconds(4))
        #expect(i.cancelIfDue(now: t0 + .seconds(3), createInFlight: false) == nil)
        #expect(i.cancelIfDue(now: t0 + .seconds(4), createInFlight: true) == nil)
        let cancelled = i.cancelIfDue(now: t0 + .seconds(5), createInFlight: false)
        let cancel = try #require(cancelled)
        #expect(cancel.step == .cancelConnection && !cancel.exclusive && cancel.packet.opcode == .leCreateConnectionCancel)
        #expect(i.nextDeadline == t0 + .seconds(8))
        // The controller's 0x02 answers the cancel: reported as 0x08.
        let ended = i.failed(status: .unknownConnectionIdentifier)
        let failure = try #require(ended)
        #expect(failure.peer == phone && failure.status == .connectionTimeout && !i.isActive)
    }

    @Test func anUnansweredCancelEndsTheAttemptAfterTheCommandTimeout() throws {
        var i = initiator(phone)
        _ = try #require(created(i.next(freeLinks: 4, advertisingTakesConnections: false, isScanning: false, scansWhileInitiating: false)))
        let cancel = i.cancelIfDue(now: t0 + .seconds(4), createInFlight: false)
        #expect(cancel != nil)
        #expect(i.giveUpIfUnanswered(now: t0 + .seconds(6)) == nil)
        #expect(i.giveUpIfUnanswered(now: t0 + .seconds(7)) == phone)
        #expect(!i.isActive && i.nextDeadline == nil)
    }

    @Test func queuedAttemptsExpireAtTheirDeadline() {
        var i = LinkManager.Initiator(configuration: configuration)
        i.enqueue(LinkManager.Attempt(peer: phone, deadline: t0 + .seconds(2)))
        i.enqueue(LinkManager.Attempt(peer: other, deadline: t0 + .seconds(1)))
        #expect(i.nextDeadline == t0 + .seconds(1))
        #expect(i.expireQueued(now: t0).isEmpty)
        #expect(i.expireQueued(now: t0 + .seconds(1)).map(\.peer) == [other])
        #expect(i.queue.map(\.peer) == [phone])
    }
}
