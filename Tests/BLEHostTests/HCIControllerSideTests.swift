import Testing

@testable import BLEHost

/// The controller side of the HCI codecs (what the simulated air's controllers use): every
/// command the host sends decodes back to itself, and every event a controller encodes decodes
/// with the host's decoder to the same values.
@Suite struct HCIControllerSideTests {
    /// Encodes with the host's encoder, frames it, decodes it as a controller, and encodes again.
    func roundTrip<C: HCIDecodableCommand>(_ command: C) throws -> C {
        let packet = command.packet
        #expect(packet[0] == 0x01)
        let received = try HCIReceivedCommand(body: packet.dropFirst())
        #expect(received.opcode == C.opcode)
        let decoded = try received.decode(C.self)
        #expect(decoded.packet == packet)
        return decoded
    }

    @Test func everyCommandTheHostSendsDecodes() throws {
        _ = try roundTrip(Reset())
        #expect(try roundTrip(SetEventMask(mask: .leHost)).mask == .leHost)
        #expect(try roundTrip(WriteLEHostSupported(leSupported: true, simultaneous: false)).leSupported)
        _ = try roundTrip(ReadLocalVersionInformation())
        _ = try roundTrip(ReadLocalSupportedCommands())
        _ = try roundTrip(ReadBufferSize())
        _ = try roundTrip(ReadBDAddr())
        #expect(try roundTrip(ReadRSSI(handle: 0x0042)).handle == 0x0042)
        #expect(try roundTrip(LESetEventMask(mask: .leHost)).mask == .leHost)
        _ = try roundTrip(LEReadBufferSize())
        _ = try roundTrip(LEReadLocalSupportedFeatures())
        let random = BluetoothAddress(rawValue: 0xC1_22_33_44_55_66)
        #expect(try roundTrip(LESetRandomAddress(address: random)).address == random)
        _ = try roundTrip(LEReadSupportedStates())
        #expect(try roundTrip(LELongTermKeyRequestNegativeReply(handle: 7)).handle == 7)
        let params = LESetAdvertisingParameters(intervalMin: 0x0100, intervalMax: 0x0140, type: .nonConnectableUndirected, ownAddressType: .random)
        #expect(try roundTrip(params) == params)
        let data = try AdvertisingPayload([0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC])
        #expect(try roundTrip(LESetAdvertisingData(data)).data == data)
        #expect(try roundTrip(LESetScanResponseData(.empty)).data == .empty)
        #expect(try roundTrip(LESetAdvertisingEnable(true)).enabled)
        let scan = LESetScanParameters(type: .active, interval: 0x0060, window: 0x0030, ownAddressType: .random)
        #expect(try roundTrip(scan) == scan)
        let enable = try roundTrip(LESetScanEnable(true, filterDuplicates: false))
        #expect(enable.enabled && !enable.filterDuplicates)
        let create = LECreateConnection(peerAddress: random, peerAddressType: .random, ownAddressType: .random)
        #expect(try roundTrip(create) == create)
        _ = try roundTrip(LECreateConnectionCancel())
        let update = LEConnectionUpdate(handle: 3, parameters: LEConnectionParameters(intervalMin: 24, intervalMax: 40))
        #expect(try roundTrip(update) == update)
        let disconnect = try roundTrip(Disconnect(handle: 0x0EFF, reason: .remoteUserTerminated))
        #expect(disconnect.handle == 0x0EFF && disconnect.reason == .remoteUserTerminated)
    }

    @Test func malformedCommandsThrow() {
        // Length byte says 2, one byte present.
        #expect(throws: DecodeError.self) { try HCIReceivedCommand(body: [0x0C, 0x20, 0x02, 0x01][...]) }
        // Trailing byte after the parameters.
        #expect(throws: DecodeError.self) { try HCIReceivedCommand(body: [0x03, 0x0C, 0x00, 0xFF][...]) }
        // Right framing, wrong parameter count for the command.
        #expect(throws: DecodeError.self) {
            try HCIReceivedCommand(body: [0x0C, 0x20, 0x01, 0x01][...]).decode(LESetScanEnable.self)
        }
        #expect(throws: DecodeError.self) {
            try HCIReceivedCommand(body: [0x03, 0x0C, 0x01, 0x00][...]).decode(Reset.self)
        }
        // Advertising data claiming 32 significant bytes.
        var bad: [UInt8] = [0x08, 0x20, 0x20, 32]
        bad += [UInt8](repeating: 0, count: 31)
        #expect(throws: DecodeError.self) { try HCIReceivedCommand(body: bad[...]).decode(LESetAdvertisingData.self) }
    }

    @Test func returnParametersDecodeWithTheHostsDecoder() throws {
        func result<C: HCIReturnParametersEncoding>(_ type: C.Type, _ p: C.ReturnParameters) throws -> C.ReturnParameters {
            let event = CommandComplete(type, returning: p, numberOfCommands: 1)
            guard case .commandComplete(let decoded) = try HCIEvent(decoding: event.packet.body) else {
                throw DecodeError(.invalidValue, field: "event", detail: "not Command Complete")
            }
            #expect(decoded.opcode == C.opcode && decoded.numberOfCommands == 1)
            return try C.decodeReturn(decoded.result)
        }
        let version = ReadLocalVersionInformation.ReturnParameters(
            hciVersion: 9, hciRevision: 1, lmpVersion: 9, manufacturer: 0x0002, lmpSubversion: 3)
        #expect(try result(ReadLocalVersionInformation.self, version) == version)
        #expect(try result(ReadLocalSupportedCommands.self, .all) == .all)
        let buffers = ReadBufferSize.ReturnParameters(aclDataLength: 27, scoDataLength: 0, aclPacketCount: 4, scoPacketCount: 0)
        #expect(try result(ReadBufferSize.self, buffers) == buffers)
        let address = BluetoothAddress(rawValue: 0x00AA_0100_0042)
        #expect(try result(ReadBDAddr.self, address) == address)
        let rssi = ReadRSSI.ReturnParameters(handle: 5, rssi: -67)
        #expect(try result(ReadRSSI.self, rssi) == rssi)
        let le = LEReadBufferSize.ReturnParameters(dataLength: 27, packetCount: 4)
        #expect(try result(LEReadBufferSize.self, le) == le)
        #expect(try result(LEReadLocalSupportedFeatures.self, [.encryption, .privacy]) == [.encryption, .privacy])
        #expect(try result(LEReadSupportedStates.self, 0x3FF_FFFF_FFFF) == 0x3FF_FFFF_FFFF)
        #expect(try result(LELongTermKeyRequestNegativeReply.self, 9) == 9)

        let failed = CommandComplete(opcode: .leSetScanEnable, status: .commandDisallowed)
        guard case .commandComplete(let decoded) = try HCIEvent(decoding: failed.packet.body) else {
            Issue.record("not Command Complete")
            return
        }
        #expect(decoded.result == .complete(status: .commandDisallowed, parameters: [][...]))
    }

    @Test func eventsDecodeWithTheHostsDecoder() throws {
        let status = CommandStatus(status: .success, numberOfCommands: 1, opcode: .leCreateConnection)
        #expect(try HCIEvent(decoding: status.packet.body) == .commandStatus(status))

        let disconnection = DisconnectionComplete(handle: 0x0041, reason: .connectionTimeout)
        #expect(try HCIEvent(decoding: disconnection.packet.body) == .disconnectionComplete(disconnection))

        let completed = NumberOfCompletedPackets([.init(handle: 1, count: 2), .init(handle: 0x0FFF, count: 1)])
        guard case .numberOfCompletedPackets(let n) = try HCIEvent(decoding: completed.packet.body) else {
            Issue.record("not Number Of Completed Packets")
            return
        }
        #expect(n.map { [$0.handle, $0.completedPackets] } == [[1, 2], [0x0FFF, 1]])

        let connection = LEConnectionComplete(
            status: .success, handle: 0x0040, role: .central, peerAddressType: .random,
            peerAddress: BluetoothAddress(rawValue: 0x4A_BB_CC_DD_EE_FF), interval: 0x0028, latency: 0, supervisionTimeout: 0x01F4)
        #expect(try HCIEvent(decoding: connection.packet.body) == .le(.connectionComplete(connection)))

        let update = LEConnectionUpdateComplete(status: .success, handle: 0x40, interval: 24, latency: 0, supervisionTimeout: 500)
        #expect(try HCIEvent(decoding: update.packet.body) == .le(.connectionUpdateComplete(update)))
    }

    @Test func severalAdvertisingReportsShareOneEvent() throws {
        let reports = [
            LEAdvertisingReport(
                eventType: .connectableUndirected, addressType: .random, address: BluetoothAddress(rawValue: 0x41_02_03_04_05_06),
                data: [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC][...], rawRSSI: -61),
            LEAdvertisingReport(
                eventType: .nonConnectableUndirected, addressType: .random, address: BluetoothAddress(rawValue: 0x7A_00_00_00_00_01),
                data: [][...], rawRSSI: 127),
            LEAdvertisingReport(
                eventType: .scanResponse, addressType: .public, address: BluetoothAddress(rawValue: 1),
                data: [UInt8](repeating: 0xAB, count: 31)[...], rawRSSI: -99),
        ]
        let packet = LEAdvertisingReports.packet(reports)
        guard case .le(.advertisingReport(let decoded)) = try HCIEvent(decoding: packet.body) else {
            Issue.record("not an advertising report")
            return
        }
        #expect(Array(decoded) == reports)
        #expect(reports.map(\.recordSize).reduce(0, +) + 2 == packet.body.count - 2)
    }
}
