import Testing
@testable import BLEHost

@Suite struct HCIEventDecodingTests {
    @Test func commandCompleteAndStatus() throws {
        guard case .commandComplete(let cc) = try decodeEvent("0e 04 01 03 0c 00") else { Issue.record("kind"); return }
        #expect(cc.numberOfCommands == 1 && cc.opcode == .reset && Array(cc.returnParameters) == [0])
        #expect(cc.result == .complete(status: .success, parameters: []))

        guard case .commandComplete(let nop) = try decodeEvent("0e 03 01 00 00") else { Issue.record("kind"); return }
        #expect(nop.opcode == .noOperation && nop.returnParameters.isEmpty)

        #expect(try decodeEvent("0f 04 00 01 0d 20") == .commandStatus(CommandStatus(status: .success, numberOfCommands: 1, opcode: .leCreateConnection)))
        #expect(try decodeEvent("0f 04 0c 02 0e 20") == .commandStatus(CommandStatus(status: .commandDisallowed, numberOfCommands: 2, opcode: .leCreateConnectionCancel)))
    }

    @Test func linkEvents() throws {
        #expect(try decodeEvent("05 04 00 40 00 13") == .disconnectionComplete(DisconnectionComplete(handle: 0x40, reason: .remoteUserTerminated)))
        #expect(try decodeEvent("10 01 07") == .hardwareError(code: 7))
        guard case .encryptionChange(let change) = try decodeEvent("08 04 00 40 00 01") else { Issue.record("kind"); return }
        #expect(change.handle == 0x40 && change.enabled == 1 && change.status == .success)
    }

    @Test func numberOfCompletedPackets() throws {
        guard case .numberOfCompletedPackets(let nocp) = try decodeEvent("13 09 02 40 00 01 00 41 20 02 00") else {
            Issue.record("kind")
            return
        }
        #expect(nocp.map(\.handle) == [0x40, 0x41])  // flags above the 12-bit handle are masked
        #expect(nocp.map(\.completedPackets) == [1, 2])
        #expect(throws: DecodeError.self) { try decodeEvent("13 05 02 40 00 01 00") }
        #expect(throws: DecodeError.self) { try decodeEvent("13 06 01 40 00 01 00 ff") }
    }

    @Test func connectionComplete() throws {
        guard case .le(.connectionComplete(let c)) = try decodeEvent("3e 13 01 00 40 00 01 01 66 55 44 33 22 11 28 00 00 00 f4 01 00") else {
            Issue.record("kind")
            return
        }
        #expect(c.status == .success && c.handle == 0x40 && c.role == .peripheral)
        #expect(c.peerAddressType == .random && c.peerAddress.description == "11:22:33:44:55:66")
        #expect(c.interval == 0x28 && c.latency == 0 && c.supervisionTimeout == 0x1F4 && c.centralClockAccuracy == 0)
        #expect(c.localResolvablePrivateAddress == nil)

        guard case .le(.connectionComplete(let cancelled)) = try decodeEvent("3e 13 01 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00") else {
            Issue.record("kind")
            return
        }
        #expect(cancelled.status == .unknownConnectionIdentifier)
    }

    @Test func enhancedConnectionComplete() throws {
        let hex = "3e 1f 0a 00 41 00 00 00 66 55 44 33 22 11 01 02 03 04 05 46 00 00 00 00 00 00 18 00 00 00 c8 00 05"
        guard case .le(.enhancedConnectionComplete(let c)) = try decodeEvent(hex) else { Issue.record("kind"); return }
        #expect(c.handle == 0x41 && c.role == .central && c.peerAddressType == .public)
        #expect(c.localResolvablePrivateAddress?.description == "46:05:04:03:02:01")
        #expect(c.peerResolvablePrivateAddress?.rawValue == 0)
        #expect(c.interval == 0x18 && c.supervisionTimeout == 0xC8 && c.centralClockAccuracy == 5)
    }

    @Test func otherLESubevents() throws {
        guard case .le(.connectionUpdateComplete(let u)) = try decodeEvent("3e 0a 03 00 40 00 18 00 02 00 f4 01") else {
            Issue.record("kind")
            return
        }
        #expect(u.handle == 0x40 && u.interval == 0x18 && u.latency == 2 && u.supervisionTimeout == 0x1F4)
        guard case .le(.readRemoteFeaturesComplete(let f)) = try decodeEvent("3e 0c 04 00 40 00 01 00 00 00 00 00 00 00") else {
            Issue.record("kind")
            return
        }
        #expect(f.features == .encryption)
        guard case .le(.longTermKeyRequest(let ltk)) = try decodeEvent("3e 0d 05 40 00 01 02 03 04 05 06 07 08 34 12") else {
            Issue.record("kind")
            return
        }
        #expect(ltk.handle == 0x40 && ltk.randomNumber == 0x0807_0605_0403_0201 && ltk.encryptedDiversifier == 0x1234)
    }

    @Test func unknownEventsArePreserved() throws {
        #expect(try decodeEvent("ff 02 aa bb") == .unknown(code: HCIEventCode(rawValue: 0xFF), parameters: [0xAA, 0xBB]))
        #expect(try decodeEvent("3e 03 0d 01 02") == .le(.unknown(subevent: 0x0D, parameters: [0x01, 0x02])))
        #expect(try decodeEvent("1a 01 01") == .unknown(code: HCIEventCode(rawValue: 0x1A), parameters: [0x01]))
    }

    @Test func malformedEventsThrow() {
        for hex in [
            "", "0e", "0e 04 01 03 0c", "0e 02 01 03 0c 00", "0e 01 01", "0f 03 00 01 0d", "05 03 00 40 00",
            "10 00", "3e 00", "3e 05 01 00 40 00 01", "3e 1e 0a" + String(repeating: " 00", count: 29),
            "3e 09 03 00 40 00 18 00 02 00 f4", "3e 04 05 40 00 01",
        ] {
            #expect(throws: DecodeError.self, "\(hex)") { try decodeEvent(hex) }
        }
    }
}

@Suite struct LEAdvertisingReportTests {
    // Two reports: an ADV_IND from a random address with flags (RSSI −60), then an empty
    // SCAN_RSP from btvirt's public address with RSSI 127 (unavailable).
    let twoReports = "3e 19 02 02 00 01 66 55 44 33 22 11 03 02 01 06 c4 04 00 42 00 00 01 aa 00 00 7f"

    private func reports(_ hex: String) throws -> LEAdvertisingReports {
        guard case .le(.advertisingReport(let reports)) = try decodeEvent(hex) else {
            Issue.record("not an advertising report")
            return try LEAdvertisingReports(parameters: [0])
        }
        return reports
    }

    @Test func severalReportsInOneEvent() throws {
        let reports = try reports(twoReports)
        #expect(reports.count == 2)
        let all = Array(reports)
        #expect(all.count == 2)
        #expect(all[0].eventType == .connectableUndirected && all[0].eventType.isConnectable)
        #expect(all[0].addressType == .random && all[0].address.description == "11:22:33:44:55:66")
        #expect(Array(all[0].data) == [0x02, 0x01, 0x06])
        #expect(all[0].rssi == -60 && all[0].rawRSSI == -60)
        #expect(all[0].advertisingData.flags == .generalDiscoverableLEOnly)
        #expect(all[1].eventType == .scanResponse && !all[1].eventType.isConnectable)
        #expect(all[1].addressType == .public && all[1].address.description == "00:AA:01:00:00:42")
        #expect(all[1].data.isEmpty)
        #expect(all[1].rssi == nil && all[1].rawRSSI == 127)
    }

    @Test func reportDataSharesTheEventStorage() throws {
        let packet = hexBytes(twoReports)
        guard case .le(.advertisingReport(let reports)) = try HCIEvent(decoding: packet) else { Issue.record("kind"); return }
        let first = try #require(reports.first(where: { _ in true }))
        // Indices into the original packet: the slice was not copied.
        #expect(first.data.startIndex == 13 && first.data.endIndex == 16)
        #expect(packet[first.data.startIndex] == 0x02)
    }

    @Test func tenReportsAndAnEmptyEvent() throws {
        var params: [UInt8] = [10]
        for k in 0..<10 {
            let data = Array([UInt8](arrayLiteral: 0x02, 0x01, 0x06).prefix(k % 3))
            params += [0x03, 0x01, UInt8(k), 1, 2, 3, 4, 0xC0, UInt8(data.count)] + data
            params.append(UInt8(bitPattern: Int8(-40 - k)))
        }
        let reports = try LEAdvertisingReports(parameters: params[...])
        #expect(reports.map(\.rawRSSI) == (0..<10).map { Int8(-40 - $0) })
        #expect(reports.map(\.data.count) == (0..<10).map { $0 % 3 })
        #expect(Array(try LEAdvertisingReports(parameters: [0])).isEmpty)
    }

    @Test func truncatedOrInconsistentReportsThrow() {
        // Second report missing entirely.
        #expect(throws: DecodeError.self) { try decodeEvent("3e 0f 02 02 00 01 66 55 44 33 22 11 03 02 01 06 c4") }
        // Data length runs past the end.
        #expect(throws: DecodeError.self) { try decodeEvent("3e 0f 02 01 00 01 66 55 44 33 22 11 09 02 01 06 c4") }
        // RSSI missing.
        #expect(throws: DecodeError.self) { try decodeEvent("3e 0e 02 01 00 01 66 55 44 33 22 11 03 02 01 06") }
        // Bytes left after the stated reports.
        #expect(throws: DecodeError.self) { try decodeEvent("3e 10 02 01 00 01 66 55 44 33 22 11 03 02 01 06 c4 00") }
        // No report count.
        #expect(throws: DecodeError.self) { try decodeEvent("3e 01 02") }
    }
}
