import BLEHost
import FuzzDriver

/// One input: an HCI event packet (without the H4 byte), as a controller might send it. Decoding
/// must never trap; whatever decodes is walked completely, as the host would.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let event = try? HCIEvent(decoding: bytes) else { return 0 }
    switch event {
    case .commandComplete(let complete):
        let result = complete.result
        _ = try? ReadLocalVersionInformation.decodeReturn(result)
        _ = try? ReadLocalSupportedCommands.decodeReturn(result)
        _ = try? ReadBufferSize.decodeReturn(result)
        _ = try? ReadBDAddr.decodeReturn(result)
        _ = try? ReadRSSI.decodeReturn(result)
        _ = try? LEReadBufferSize.decodeReturn(result)
        _ = try? LEReadLocalSupportedFeatures.decodeReturn(result)
        _ = try? LEReadSupportedStates.decodeReturn(result)
        _ = try? LELongTermKeyRequestNegativeReply.decodeReturn(result)
    case .numberOfCompletedPackets(let completed):
        var total = 0
        for entry in completed { total &+= Int(entry.completedPackets) }
        _ = total
    case .le(.advertisingReport(let reports)):
        var seen = 0
        for report in reports {
            seen += 1
            let ad = report.advertisingData
            _ = ad.flags
            _ = ad.localName?.string
            _ = ad.txPowerLevel
            for uuid in ad.serviceUUIDs { _ = uuid }
            for entry in ad.serviceData { _ = entry.data.count }
            for entry in ad.manufacturerData { _ = entry.companyID }
            _ = report.rssi
        }
        if seen != reports.count { fatalError("validated reports iterate completely") }
    default:
        break
    }
    return 0
}

/// SwiftPM links an executable with `main` renamed to `<module>_main`: hand that to libFuzzer.
@_cdecl("FuzzHCIEvent_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOne)
}
