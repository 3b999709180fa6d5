import Testing
@testable import BLEHost

@Suite struct HCICommandEncodingTests {
    let peer = BluetoothAddress("11:22:33:44:55:66")!

    private func expectPacket(_ command: some HCICommand, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Hex.encode(command.packet) == Hex.encode(hexBytes(hex)), sourceLocation: sourceLocation)
        #expect(command.commandPacket.opcode == type(of: command).opcode, sourceLocation: sourceLocation)
    }

    @Test func controllerAndInformationalCommands() {
        expectPacket(Reset(), "01 03 0c 00")
        expectPacket(SetEventMask(), "01 01 0c 08 90 80 00 02 00 80 00 20")
        expectPacket(WriteLEHostSupported(), "01 6d 0c 02 01 00")
        expectPacket(ReadLocalVersionInformation(), "01 01 10 00")
        expectPacket(ReadLocalSupportedCommands(), "01 02 10 00")
        expectPacket(ReadBufferSize(), "01 05 10 00")
        expectPacket(ReadBDAddr(), "01 09 10 00")
        expectPacket(ReadRSSI(handle: 0x0040), "01 05 14 02 40 00")
        expectPacket(Disconnect(handle: 0x0040), "01 06 04 03 40 00 13")
        expectPacket(Disconnect(handle: 0x0001, reason: .localHostTerminated), "01 06 04 03 01 00 16")
    }

    @Test func eventMasksHoldWhatTheHostNeeds() {
        let mask = HCIEventMask.leHost
        #expect(mask.contains(.leMeta) && mask.contains(.disconnectionComplete) && mask.contains(.hardwareError))
        let le = LEEventMask.leHost
        #expect(le.rawValue == 0x1F)
        #expect(!le.contains(.remoteConnectionParameterRequest))
    }

    @Test func leControllerCommands() {
        expectPacket(LESetEventMask(), "01 01 20 08 1f 00 00 00 00 00 00 00")
        expectPacket(LEReadBufferSize(), "01 02 20 00")
        expectPacket(LEReadLocalSupportedFeatures(), "01 03 20 00")
        expectPacket(LESetRandomAddress(address: BluetoothAddress("C0:11:22:33:44:55")!), "01 05 20 06 55 44 33 22 11 c0")
        expectPacket(LEReadSupportedStates(), "01 1c 20 00")
        expectPacket(LELongTermKeyRequestNegativeReply(handle: 0x0040), "01 1b 20 02 40 00")
    }

    @Test func advertisingCommands() throws {
        expectPacket(LESetAdvertisingParameters(), "01 06 20 0f a0 00 a0 00 00 00 00 00 00 00 00 00 00 07 00")
        expectPacket(
            LESetAdvertisingParameters(
                intervalMin: 0x0800, intervalMax: 0x0900, type: .nonConnectableUndirected, ownAddressType: .random),
            "01 06 20 0f 00 08 00 09 03 01 00 00 00 00 00 00 00 07 00")
        let data = try AdvertisingPayload(hexBytes("02 01 06 03 03 f6 fc"))
        expectPacket(LESetAdvertisingData(data), "01 08 20 20 07 02 01 06 03 03 f6 fc" + String(repeating: " 00", count: 24))
        expectPacket(LESetScanResponseData(.empty), "01 09 20 20 00" + String(repeating: " 00", count: 31))
        let full = try AdvertisingPayload([UInt8](repeating: 0xAB, count: 31))
        #expect(LESetScanResponseData(full).packet.count == 4 + 32)
        expectPacket(LESetAdvertisingEnable(true), "01 0a 20 01 01")
        expectPacket(LESetAdvertisingEnable(false), "01 0a 20 01 00")
    }

    @Test func scanCommands() {
        expectPacket(LESetScanParameters(), "01 0b 20 07 00 12 00 12 00 00 00")
        expectPacket(
            LESetScanParameters(type: .active, interval: 0x0060, window: 0x0030, ownAddressType: .random),
            "01 0b 20 07 01 60 00 30 00 01 00")
        expectPacket(LESetScanEnable(true), "01 0c 20 02 01 00")
        expectPacket(LESetScanEnable(false), "01 0c 20 02 00 00")
        expectPacket(LESetScanEnable(true, filterDuplicates: true), "01 0c 20 02 01 01")
    }

    @Test func connectionCommands() {
        expectPacket(
            LECreateConnection(peerAddress: peer, peerAddressType: .random),
            "01 0d 20 19 60 00 60 00 00 01 66 55 44 33 22 11 00 18 00 28 00 00 00 f4 01 00 00 00 00")
        expectPacket(LECreateConnectionCancel(), "01 0e 20 00")
        expectPacket(
            LEConnectionUpdate(
                handle: 0x0040,
                parameters: LEConnectionParameters(intervalMin: 0x0010, intervalMax: 0x0020, latency: 0, supervisionTimeout: 0x0100)),
            "01 13 20 0e 40 00 10 00 20 00 00 00 00 01 00 00 00 00")
    }

    @Test func opcodeParts() {
        #expect(HCIOpcode.leSetScanEnable.rawValue == 0x200C)
        #expect(HCIOpcode.leSetScanEnable.ogf == 0x08 && HCIOpcode.leSetScanEnable.ocf == 0x000C)
        #expect(HCIOpcode(rawValue: 0xFC01).ogf == 0x3F)
        #expect(HCIOpcode.reset.description == "Reset (0x0c03)")
        #expect(HCIOpcode(rawValue: 0xFC01).description.contains("OGF 0x3f"))
        #expect(HCIStatus(rawValue: 0x0C) == .commandDisallowed)
        #expect(HCIStatus(rawValue: 0x99).description == "status 0x99")
    }

    @Test func connectionParameterValidity() {
        #expect(LEConnectionParameters().isValid)
        #expect(!LEConnectionParameters(intervalMin: 0x0020, intervalMax: 0x0010).isValid)
        #expect(!LEConnectionParameters(intervalMin: 5, intervalMax: 6).isValid)
        // 4 s interval with 10 events of latency cannot be supervised in 1 s.
        #expect(!LEConnectionParameters(intervalMin: 3200, intervalMax: 3200, latency: 10, supervisionTimeout: 100).isValid)
    }
}

@Suite struct HCIReturnParameterTests {
    private func result(_ hex: String) throws -> HCICommandResult {
        guard case .commandComplete(let cc) = try decodeEvent(hex) else {
            Issue.record("not a Command Complete")
            return .cancelled
        }
        return cc.result
    }

    @Test func readLocalVersion() throws {
        let version = try ReadLocalVersionInformation.decodeReturn(try result("0e 0c 01 01 10 00 09 00 01 09 0f 00 34 12"))
        #expect(version.hciVersion == 9)
        #expect(version.hciRevision == 0x0100)
        #expect(version.lmpVersion == 9)
        #expect(version.manufacturer == 0x000F)
        #expect(version.lmpSubversion == 0x1234)
    }

    @Test func readBDAddr() throws {
        let address = try ReadBDAddr.decodeReturn(try result("0e 0a 01 09 10 00 42 00 00 01 aa 00"))
        #expect(address.description == "00:AA:01:00:00:42")
    }

    @Test func bufferSizes() throws {
        let le = try LEReadBufferSize.decodeReturn(try result("0e 07 01 02 20 00 c0 00 01"))
        #expect(le.dataLength == 192 && le.packetCount == 1 && !le.isShared)
        #expect(try LEReadBufferSize.decodeReturn(try result("0e 07 01 02 20 00 00 00 00")).isShared)
        let acl = try ReadBufferSize.decodeReturn(try result("0e 0b 01 05 10 00 fd 03 40 08 00 00 00"))
        #expect(acl.aclDataLength == 1021 && acl.scoDataLength == 0x40 && acl.aclPacketCount == 8 && acl.scoPacketCount == 0)
    }

    @Test func rssiStatesFeaturesCommands() throws {
        let rssi = try ReadRSSI.decodeReturn(try result("0e 07 01 05 14 00 40 00 c4"))
        #expect(rssi.handle == 0x40 && rssi.rssi == -60)
        let states = try LEReadSupportedStates.decodeReturn(try result("0e 0c 01 1c 20 00 ff ff ff ff ff 03 00 00"))
        #expect(states == 0x03FF_FFFF_FFFF)
        let features = try LEReadLocalSupportedFeatures.decodeReturn(try result("0e 0c 01 03 20 00 21 00 00 00 00 00 00 00"))
        #expect(features.contains(.encryption) && features.contains(.dataPacketLengthExtension))
        #expect(!features.contains(.extendedAdvertising))
        var octets = [UInt8](repeating: 0, count: 64)
        octets[24] = 0x40
        let commands = try ReadLocalSupportedCommands.decodeReturn(
            try result("0e 44 01 02 10 00 " + Hex.encode(octets)))
        #expect(commands.writeLEHostSupported)
        #expect(!SupportedCommands(octets: [UInt8](repeating: 0, count: 64)).writeLEHostSupported)
    }

    @Test func failuresAreTyped() throws {
        #expect(throws: HCICommandError.failed(.unknownCommand)) {
            try LEReadBufferSize.decodeReturn(try result("0e 04 01 02 20 01"))
        }
        #expect(throws: HCICommandError.self) { try ReadBDAddr.decodeReturn(try result("0e 06 01 09 10 00 42 00")) }
        #expect(throws: HCICommandError.timedOut) { try ReadBDAddr.decodeReturn(.timedOut) }
        #expect(throws: HCICommandError.failed(.commandDisallowed)) { try ReadBDAddr.decodeReturn(.status(.commandDisallowed)) }
        #expect(throws: HCICommandError.unexpectedCommandStatus) { try ReadBDAddr.decodeReturn(.status(.success)) }
    }
}
