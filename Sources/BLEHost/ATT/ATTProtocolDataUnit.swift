/// One ATT PDU type: a fixed opcode, its parameters decoded from and encoded to the bytes that
/// follow the opcode byte. Decoding rejects a parameter block of the wrong size for the opcode
/// with a ``DecodeError``; the server turns that into Error Response "Invalid PDU".
public protocol ATTProtocolDataUnit: Hashable, Sendable {
    static var opcode: ATTOpcode { get }
    /// Decodes everything after the opcode byte; every byte must belong to the PDU.
    init(parameters: ArraySlice<UInt8>) throws(DecodeError)
    func appendParameters(to bytes: inout [UInt8])
}

extension ATTProtocolDataUnit {
    /// The whole PDU: opcode byte, then parameters.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = [Self.opcode.rawValue]
        appendParameters(to: &bytes)
        return bytes
    }
}

extension ByteReader {
    /// An ATT UUID: 2 or 16 bytes (ATT never carries 32-bit UUIDs).
    mutating func readATTUUID(size: Int, _ field: StaticString) throws(DecodeError) -> BluetoothUUID {
        guard size == 2 || size == 16 else {
            throw DecodeError(.lengthMismatch, field: field, detail: "\(size) bytes; an ATT UUID is 2 or 16")
        }
        return try BluetoothUUID(littleEndianBytes: readBytes(size, field))
    }
}
