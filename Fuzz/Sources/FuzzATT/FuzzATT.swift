import BLEHost
import FuzzDriver

/// A GATT database like the venue's: the Herald service with a write-only signal characteristic
/// and a long readable payload, plus a notifying characteristic with a user description.
let database: GATTDatabase? = try? GATTDatabase(
    deviceName: "venue", appearance: 0,
    services: [
        GATTServiceDescription(uuid: BluetoothUUID(0xFCF6 as UInt16), characteristics: [
            .init(uuid: BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!, properties: [.write, .writeWithoutResponse]),
            .init(uuid: BluetoothUUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")!, properties: .read,
                  value: .dynamic(initial: [UInt8](repeating: 0x5A, count: 300))),
        ]),
        GATTServiceDescription(uuid: BluetoothUUID(0x180F as UInt16), characteristics: [
            .init(uuid: BluetoothUUID(0x2A19 as UInt16), properties: [.read, .notify], value: .dynamic(initial: [100]),
                  userDescription: "Level"),
        ]),
    ])

/// One input: a sequence of ATT PDUs from a peer, each preceded by its length byte, fed to one
/// link's `GATTConnection` (so MTU exchanges and prepared writes carry over between PDUs).
/// Every PDU must decode or fail with a typed error; every request must get exactly one answer
/// that fits the MTU; nothing may trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let database else { fatalError("the fuzz database is invalid") }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var connection = GATTConnection(link: 1)
    let now = ContinuousClock.now
    var i = 0
    while i < bytes.count {
        let length = Int(bytes[i])
        let pdu = bytes[(i + 1)..<min(bytes.count, i + 1 + length)]
        i += 1 + length
        _ = try? ATTPDU.decode(pdu)
        let answers = connection.receive(pdu, database: database, now: now) { write in
            write.value.first == 0x02 && write.value.count != 3 ? .invalidAttributeValueLength : nil
        }.compactMap { action -> [UInt8]? in
            if case .send(let out) = action { return out }
            return nil
        }
        guard let first = pdu.first else { continue }
        let opcode = ATTOpcode(first)
        let isRequest = opcode.kind == .request || (opcode.kind == nil && !opcode.isCommand)
        if isRequest && answers.count != 1 { fatalError("request \(Hex.encode(pdu)) got \(answers.count) answers") }
        for answer in answers where answer.count > connection.mtu {
            fatalError("answer of \(answer.count) bytes exceeds the MTU \(connection.mtu)")
        }
    }
    return 0
}

/// SwiftPM links an executable with `main` renamed to `<module>_main`: hand that to libFuzzer.
@_cdecl("FuzzATT_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOne)
}
