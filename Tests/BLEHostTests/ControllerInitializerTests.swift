import Testing
@testable import BLEHost

/// Return parameters a small LE controller gives during init (status byte included).
enum InitAnswers {
    static let version: [UInt8] = [0x00, 0x09, 0x00, 0x01, 0x09, 0x02, 0x00, 0x34, 0x12]
    static func supportedCommands(writeLEHostSupported: Bool) -> [UInt8] {
        var octets = [UInt8](repeating: 0xFF, count: 64)
        octets[24] = writeLEHostSupported ? 0x40 : 0x00
        return [0x00] + octets
    }
    static let bdAddr: [UInt8] = [0x00, 0x42, 0x00, 0x00, 0x01, 0xAA, 0x00]
    static let leBufferSize: [UInt8] = [0x00, 0xC0, 0x00, 0x01]
    static let leFeatures: [UInt8] = [0x00, 0x01, 0, 0, 0, 0, 0, 0, 0]
    static let states: [UInt8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0, 0]
}

@Suite struct ControllerInitializerTests {
    private func complete(_ params: [UInt8]) -> HCICommandResult {
        CommandComplete(numberOfCommands: 1, opcode: .noOperation, returnParameters: params[...]).result
    }

    /// Runs the sequence, answering each command from `answer`; returns the opcodes sent and the end.
    private func run(_ answer: (HCIOpcode) -> HCICommandResult) -> ([HCIOpcode], ControllerInitializer.Step?) {
        var initializer = ControllerInitializer()
        var step: ControllerInitializer.Step? = initializer.start()
        var sent: [HCIOpcode] = []
        while case .send(let command) = step {
            sent.append(command.opcode)
            #expect(initializer.awaiting == command.opcode)
            step = initializer.handle(command.opcode, answer(command.opcode))
            if sent.count > 20 { break }
        }
        return (sent, step)
    }

    private func standard(_ opcode: HCIOpcode, writeLEHostSupported: Bool = true) -> HCICommandResult {
        switch opcode {
        case .readLocalVersionInformation: return complete(InitAnswers.version)
        case .readLocalSupportedCommands: return complete(InitAnswers.supportedCommands(writeLEHostSupported: writeLEHostSupported))
        case .readBDAddr: return complete(InitAnswers.bdAddr)
        case .leReadBufferSize: return complete(InitAnswers.leBufferSize)
        case .leReadLocalSupportedFeatures: return complete(InitAnswers.leFeatures)
        case .leReadSupportedStates: return complete(InitAnswers.states)
        default: return complete([0x00])
        }
    }

    @Test func fullSequenceEndsInControllerInfo() throws {
        let (sent, end) = run { standard($0) }
        #expect(sent == [
            .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .setEventMask, .leSetEventMask,
            .writeLEHostSupported, .readBDAddr, .leReadBufferSize, .leReadLocalSupportedFeatures, .leReadSupportedStates,
        ])
        guard case .done(let info) = end else { Issue.record("\(String(describing: end))"); return }
        #expect(info.address.description == "00:AA:01:00:00:42")
        #expect(info.hciVersion == 9 && info.bluetoothVersion == "5.0" && info.hciRevision == 0x0100 && info.manufacturer == 2)
        #expect(info.lmpSubversion == 0x1234)
        #expect(info.aclDataLength == 192 && info.aclPacketCount == 1 && !info.aclBuffersShared)
        #expect(info.supportedStates == 0x03FF_FFFF_FFFF)
        #expect(info.leFeatures == .encryption)
    }

    @Test func writeLEHostSupportedOnlyWhenSupportedAndItsFailureIsIgnored() {
        let (without, end1) = run { standard($0, writeLEHostSupported: false) }
        #expect(!without.contains(.writeLEHostSupported))
        guard case .done = end1 else { Issue.record("not done"); return }
        let (with, end2) = run { $0 == .writeLEHostSupported ? .complete(status: .unknownCommand, parameters: []) : standard($0) }
        #expect(with.contains(.writeLEHostSupported))
        guard case .done = end2 else { Issue.record("not done"); return }
    }

    @Test func sharedBuffersFallBackToReadBufferSize() {
        for leAnswer in [complete([0x00, 0x00, 0x00, 0x00]), .complete(status: .unknownCommand, parameters: [])] {
            let (sent, end) = run { opcode in
                switch opcode {
                case .leReadBufferSize: return leAnswer
                case .readBufferSize: return complete([0x00, 0xFB, 0x00, 0x40, 0x08, 0x00, 0x00, 0x00])
                default: return standard(opcode)
                }
            }
            #expect(sent.suffix(4) == [.leReadBufferSize, .readBufferSize, .leReadLocalSupportedFeatures, .leReadSupportedStates])
            guard case .done(let info) = end else { Issue.record("not done"); return }
            #expect(info.aclDataLength == 251 && info.aclPacketCount == 8 && info.aclBuffersShared)
        }
    }

    @Test func optionalStepsFallBack() {
        let (_, end) = run { opcode in
            switch opcode {
            case .readLocalSupportedCommands, .leReadLocalSupportedFeatures, .leReadSupportedStates:
                return .complete(status: .unknownCommand, parameters: [])
            default: return standard(opcode)
            }
        }
        guard case .done(let info) = end else { Issue.record("not done"); return }
        #expect(info.supportedCommands == .all && info.leFeatures == [] && info.supportedStates == 0)
    }

    @Test func requiredStepsFail() {
        for (opcode, result) in [
            (HCIOpcode.reset, HCICommandResult.complete(status: .hardwareFailure, parameters: [])),
            (.leSetEventMask, .complete(status: .unknownCommand, parameters: [])),
            (.readBDAddr, complete([0x00, 0x42])),
            (.readLocalVersionInformation, .timedOut),
        ] {
            let (sent, end) = run { $0 == opcode ? result : standard($0) }
            #expect(sent.last == opcode)
            guard case .failed(let failure) = end else { Issue.record("\(opcode) did not fail"); continue }
            #expect(failure.opcode == opcode)
        }
        let (_, zero) = run { opcode in
            switch opcode {
            case .leReadBufferSize: return complete([0x00, 0x00, 0x00, 0x00])
            case .readBufferSize: return complete([0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
            default: return standard(opcode)
            }
        }
        #expect(zero == .failed(ControllerInitializer.Failure(opcode: .readBufferSize, error: .failed(.unsupportedFeature))))
    }

    @Test func resultsForOtherCommandsAreIgnored() {
        var initializer = ControllerInitializer()
        _ = initializer.start()
        #expect(initializer.handle(.readBDAddr, complete(InitAnswers.bdAddr)) == nil)
        #expect(initializer.awaiting == .reset)
    }
}
