import Testing
@testable import BLEHost

@Suite struct HCICommandQueueTests {
    let t0 = ContinuousClock.now

    private func cc(_ opcode: HCIOpcode, ncmd: UInt8 = 1, _ params: [UInt8] = [0]) -> HCIEvent {
        .commandComplete(CommandComplete(numberOfCommands: ncmd, opcode: opcode, returnParameters: params[...]))
    }

    private func cs(_ opcode: HCIOpcode, _ status: HCIStatus = .success, ncmd: UInt8 = 1) -> HCIEvent {
        .commandStatus(CommandStatus(status: status, numberOfCommands: ncmd, opcode: opcode))
    }

    @Test func oneInFlightUntilItsCompletion() {
        var queue = HCICommandQueue()
        var actions: [HCICommandQueue.Action] = []
        let reset = queue.enqueue(Reset().commandPacket, now: t0, into: &actions)
        let version = queue.enqueue(ReadLocalVersionInformation().commandPacket, now: t0, into: &actions)
        #expect(actions == [.send(Reset().packet)])
        #expect(queue.inFlightOpcodes == [.reset] && queue.waitingCount == 1)

        actions.removeAll()
        // Other events pass through untouched.
        #expect(!queue.handle(.hardwareError(code: 1), now: t0, into: &actions))
        #expect(actions.isEmpty)

        #expect(queue.handle(cc(.reset), now: t0, into: &actions))
        #expect(actions == [.complete(reset, .reset, .complete(status: .success, parameters: [])), .send(ReadLocalVersionInformation().packet)])
        actions.removeAll()
        queue.handle(cc(.readLocalVersionInformation, [0x00, 9, 0, 1, 9, 0x0F, 0, 0x34, 0x12]), now: t0, into: &actions)
        #expect(actions == [.complete(version, .readLocalVersionInformation, .complete(status: .success, parameters: [9, 0, 1, 9, 0x0F, 0, 0x34, 0x12]))])
        #expect(queue.isIdle)
    }

    @Test func honoursNcmdZeroUntilANoOpGivesCredit() {
        var queue = HCICommandQueue()
        var actions: [HCICommandQueue.Action] = []
        queue.enqueue(Reset().commandPacket, now: t0, into: &actions)
        queue.enqueue(ReadBDAddr().commandPacket, now: t0, into: &actions)
        actions.removeAll()
        queue.handle(cc(.reset, ncmd: 0), now: t0, into: &actions)
        #expect(actions.count == 1)  // Reset completed, Read BD_ADDR still waits
        #expect(queue.credits == 0 && queue.waitingCount == 1)
        actions.removeAll()
        queue.handle(cc(.noOperation, ncmd: 1, []), now: t0, into: &actions)
        #expect(actions == [.send(ReadBDAddr().packet)])
        #expect(queue.unmatchedCompletions == 0)
    }

    @Test func commandStatusCompletesEitherWay() {
        var queue = HCICommandQueue()
        var actions: [HCICommandQueue.Action] = []
        let peer = BluetoothAddress(rawValue: 0x11_2233_4455)
        let create = queue.enqueue(LECreateConnection(peerAddress: peer, peerAddressType: .random).commandPacket, now: t0, into: &actions)
        let cancel = queue.enqueue(LECreateConnectionCancel().commandPacket, now: t0, into: &actions)
        actions.removeAll()
        queue.handle(cs(.leCreateConnection), now: t0, into: &actions)
        #expect(actions.first == .complete(create, .leCreateConnection, .status(.success)))
        actions.removeAll()
        queue.handle(cs(.leCreateConnectionCancel, .commandDisallowed), now: t0, into: &actions)
        #expect(actions == [.complete(cancel, .leCreateConnectionCancel, .status(.commandDisallowed))])
    }

    @Test func unmatchedCompletionsOnlyUpdateCredits() {
        var queue = HCICommandQueue()
        var actions: [HCICommandQueue.Action] = []
        queue.enqueue(Reset().commandPacket, now: t0, into: &actions)
        actions.removeAll()
        queue.handle(cc(.readBDAddr, ncmd: 1), now: t0, into: &actions)
        #expect(actions.isEmpty && queue.unmatchedCompletions == 1 && queue.inFlightOpcodes == [.reset])
    }

    @Test func matchesByOpcodeWithSeveralInFlight() {
        var queue = HCICommandQueue(maximumInFlight: 2)
        var actions: [HCICommandQueue.Action] = []
        let a = queue.enqueue(ReadBDAddr().commandPacket, now: t0, into: &actions)
        queue.handle(cc(.noOperation, ncmd: 3, []), now: t0, into: &actions)
        let b = queue.enqueue(ReadBufferSize().commandPacket, now: t0, into: &actions)
        queue.enqueue(LEReadBufferSize().commandPacket, now: t0, into: &actions)
        #expect(queue.inFlightOpcodes == [.readBDAddr, .readBufferSize] && queue.waitingCount == 1)
        actions.removeAll()
        queue.handle(cc(.readBufferSize, ncmd: 2), now: t0, into: &actions)
        #expect(actions == [.complete(b, .readBufferSize, .complete(status: .success, parameters: [])), .send(LEReadBufferSize().packet)])
        actions.removeAll()
        queue.handle(cc(.readBDAddr, ncmd: 2), now: t0, into: &actions)
        #expect(actions == [.complete(a, .readBDAddr, .complete(status: .success, parameters: []))])
    }

    @Test func timeoutEndsTheCommandAndLetsTheNextGo() {
        var queue = HCICommandQueue(timeout: .seconds(3))
        var actions: [HCICommandQueue.Action] = []
        let stuck = queue.enqueue(Reset().commandPacket, now: t0, into: &actions)
        queue.enqueue(ReadBDAddr().commandPacket, now: t0 + .seconds(1), into: &actions)
        #expect(queue.nextDeadline == t0 + .seconds(3))
        actions.removeAll()
        queue.tick(now: t0 + .milliseconds(2999), into: &actions)
        #expect(actions.isEmpty)
        queue.tick(now: t0 + .seconds(3), into: &actions)
        #expect(actions == [.complete(stuck, .reset, .timedOut), .send(ReadBDAddr().packet)])
        #expect(queue.nextDeadline == t0 + .seconds(6))
        // A late answer for the timed-out command matches nothing.
        actions.removeAll()
        queue.handle(cc(.reset), now: t0 + .seconds(4), into: &actions)
        #expect(actions.isEmpty && queue.unmatchedCompletions == 1)
    }

    @Test func waitingForACreditAlsoTimesOut() {
        var queue = HCICommandQueue(timeout: .seconds(2))
        var actions: [HCICommandQueue.Action] = []
        queue.enqueue(Reset().commandPacket, now: t0, into: &actions)
        let starved = queue.enqueue(ReadBDAddr().commandPacket, now: t0, into: &actions)
        queue.handle(cc(.reset, ncmd: 0), now: t0 + .seconds(1), into: &actions)
        #expect(queue.nextDeadline == t0 + .seconds(3))
        actions.removeAll()
        queue.tick(now: t0 + .seconds(3), into: &actions)
        #expect(actions == [.complete(starved, .readBDAddr, .timedOut)])
    }

    @Test func cancelAllEndsEverything() {
        var queue = HCICommandQueue()
        var actions: [HCICommandQueue.Action] = []
        let a = queue.enqueue(Reset().commandPacket, now: t0, into: &actions)
        let b = queue.enqueue(ReadBDAddr().commandPacket, now: t0, into: &actions)
        actions.removeAll()
        queue.cancelAll(into: &actions)
        #expect(actions == [.complete(a, .reset, .cancelled), .complete(b, .readBDAddr, .cancelled)])
        #expect(queue.isIdle && queue.credits == 1 && queue.nextDeadline == nil)
    }
}
