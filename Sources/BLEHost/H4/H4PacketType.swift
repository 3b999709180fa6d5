/// The H4 (UART transport) packet indicator: the byte in front of every HCI packet on an H4 stream,
/// an HCI user-channel socket and in btsnoop datalink 1002. Open, so unknown values can be reported.
public struct H4PacketType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let command = H4PacketType(rawValue: 0x01)
    public static let acl = H4PacketType(rawValue: 0x02)
    public static let sco = H4PacketType(rawValue: 0x03)
    public static let event = H4PacketType(rawValue: 0x04)
    public static let iso = H4PacketType(rawValue: 0x05)

    /// Size of the HCI header that follows the type byte (it ends with the length field); nil for
    /// types whose length cannot be known (vendor 0xFF, unknown values).
    public var headerSize: Int? {
        switch self {
        case .command, .sco: return 3  // opcode/handle u16, length u8
        case .acl, .iso: return 4  // handle+flags u16, length u16 (ISO: 14 bits, top two reserved)
        case .event: return 2  // event code u8, length u8
        default: return nil
        }
    }

    /// The parameter length announced by a header of ``headerSize`` bytes.
    func parameterLength(header h: ArraySlice<UInt8>) -> Int {
        let i = h.startIndex
        switch self {
        case .command, .sco: return Int(h[i + 2])
        case .acl: return Int(h[i + 2]) | Int(h[i + 3]) << 8
        case .iso: return (Int(h[i + 2]) | Int(h[i + 3]) << 8) & 0x3FFF
        default: return Int(h[i + 1])
        }
    }

    public var description: String {
        switch self {
        case .command: return "command"
        case .acl: return "ACL"
        case .sco: return "SCO"
        case .event: return "event"
        case .iso: return "ISO"
        default: return "type 0x" + Hex.encode([rawValue])
        }
    }
}
