/// Security Manager Protocol (L2CAP CID 0x0006) for a host that does not pair: every Pairing
/// Request or Security Request is answered with Pairing Failed, reason "pairing not supported".
public enum SMPResponder {
    public static let pairingRequest: UInt8 = 0x01
    public static let pairingFailed: UInt8 = 0x05
    public static let securityRequest: UInt8 = 0x0B
    /// Pairing Failed reason 0x05.
    public static let pairingNotSupported: UInt8 = 0x05

    /// The reply to send on CID 0x0006, or nil for PDUs that need none (including garbage).
    public static func respond(to payload: ArraySlice<UInt8>) -> [UInt8]? {
        guard let code = payload.first else { return nil }
        switch code {
        case pairingRequest, securityRequest: return [pairingFailed, pairingNotSupported]
        default: return nil
        }
    }
}
