/// The 16-byte btsnoop file header: `btsnoop\0`, version 1, datalink (all big-endian).
/// Format as written by BlueZ (`src/shared/btsnoop.c`) and Android, read by `btmon -r` and Wireshark.
public struct BTSnoopHeader: Hashable, Sendable {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    public static let size = 16

    public var version: UInt32
    public var datalink: BTSnoopDatalink

    public init(version: UInt32 = 1, datalink: BTSnoopDatalink = .h4) {
        self.version = version
        self.datalink = datalink
    }

    public func append(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: Self.magic)
        bytes.appendBE32(version)
        bytes.appendBE32(datalink.rawValue)
    }

    public var bytes: [UInt8] {
        var out = [UInt8]()
        append(to: &out)
        return out
    }

    public static func read(from reader: inout ByteReader) throws(DecodeError) -> BTSnoopHeader {
        var r = reader
        let magic = try r.readBytes(8, "btsnoop.magic")
        guard magic.elementsEqual(Self.magic) else {
            throw DecodeError(.invalidValue, field: "btsnoop.magic", detail: "not a btsnoop file")
        }
        let version = try r.readBE32("btsnoop.version")
        guard version == 1 else {
            throw DecodeError(.invalidValue, field: "btsnoop.version", detail: "version \(version); only 1 exists")
        }
        let datalink = BTSnoopDatalink(rawValue: try r.readBE32("btsnoop.datalink"))
        reader = r
        return BTSnoopHeader(version: version, datalink: datalink)
    }
}

/// What the records of a btsnoop file hold. Open: unknown values survive.
public struct BTSnoopDatalink: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// HCI packets without the H4 type byte (the flags say which kind).
    public static let hci = BTSnoopDatalink(rawValue: 1001)
    /// H4 packets: the data starts with the type byte. What we write.
    public static let h4 = BTSnoopDatalink(rawValue: 1002)
    /// Linux monitor channel records (flags = index << 16 | opcode).
    public static let linuxMonitor = BTSnoopDatalink(rawValue: 2001)
}
