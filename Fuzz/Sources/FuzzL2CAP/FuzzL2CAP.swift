import BLEHost
import FuzzDriver

/// One input: a run of ACL packets from a peer, each `u8 length | ACL packet`. They go through
/// the reassembler; every frame it produces goes to the responder of its channel (signalling
/// as central and as peripheral, SMP). Nothing may trap, and frames never exceed the limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var reassembler = ACLReassembler(maximumPayloadLength: 64)
    var rest = bytes[...]
    while let length = rest.first {
        rest = rest.dropFirst()
        let chunk = rest.prefix(Int(length))
        rest = rest.dropFirst(Int(length))
        guard let packet = try? ACLPacket(decoding: chunk) else { continue }
        guard case .frame(let frame) = reassembler.receive(packet) else { continue }
        if frame.payload.count > 64 { fatalError("frame over the limit") }
        switch frame.channel {
        case .leSignalling:
            _ = L2CAPSignallingResponder.respond(to: frame.payload, role: .central)
            _ = L2CAPSignallingResponder.respond(to: frame.payload, role: .peripheral)
            if let signal = try? L2CAPSignal(decoding: frame.payload), signal.encoded != Array(frame.payload) {
                fatalError("signalling command does not round-trip")
            }
        case .smp:
            _ = SMPResponder.respond(to: frame.payload)
        default:
            break
        }
    }
    return 0
}

/// SwiftPM links an executable with `main` renamed to `<module>_main`: hand that to libFuzzer.
@_cdecl("FuzzL2CAP_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOne)
}
