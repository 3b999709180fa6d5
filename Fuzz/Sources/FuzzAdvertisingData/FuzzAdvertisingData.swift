import BLEHost
import FuzzDriver

/// One input: advertising data (AD structures) as received from the air. Every accessor must
/// finish without trapping, and never report more bytes than there are.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let ad = AdvertisingData(bytes)
    var covered = 0
    for structure in ad { covered += 2 + structure.data.count }
    if covered > size { fatalError("AD structures cover \(covered) of \(size) bytes") }
    _ = ad.malformation
    _ = ad.flags
    _ = ad.txPowerLevel
    _ = ad.localName?.string
    var uuids = 0
    for _ in ad.serviceUUIDs { uuids += 1 }
    _ = ad.serviceUUIDs.contains(BluetoothUUID(0xFCF6 as UInt16))
    for entry in ad.serviceData { _ = entry.uuid }
    _ = ad.serviceData(for: BluetoothUUID(0xFD6F as UInt16))
    for entry in ad.manufacturerData { _ = entry.data.count }
    _ = ad.manufacturerData(company: 0x004C)
    return 0
}

/// SwiftPM links an executable with `main` renamed to `<module>_main`: hand that to libFuzzer.
@_cdecl("FuzzAdvertisingData_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOne)
}
