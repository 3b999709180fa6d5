/// What the hub publishes, retained, to `venue-beacon/ack/<node>` after its own commit: every
/// change of that node's diary up to `acked` is held at the hub. No visit or identity in it.
///
/// Binary: version 1, the diary id (string), `acked` (i64, big-endian).
public struct HubAck: Sendable, Equatable {
    public static let version: UInt8 = 1

    public var diary: String
    public var acked: Int64

    public init(diary: String, acked: Int64) {
        self.diary = diary
        self.acked = acked
    }

    public func encoded() -> [UInt8] {
        var out = WireWriter()
        out.u8(Self.version)
        out.shortString(diary)
        out.i64(acked)
        return out.bytes
    }

    public init(decoding bytes: [UInt8]) throws {
        var reader = WireReader(bytes)
        let version = try reader.u8("version")
        guard version == Self.version else { throw WireFormatError("acknowledgement version \(version), this build reads \(Self.version)") }
        diary = try reader.shortString("diary id")
        acked = try reader.i64("acked")
        guard acked >= 0 else { throw WireFormatError("acknowledged change \(acked) is negative") }
        try reader.finish("acknowledgement")
    }
}
