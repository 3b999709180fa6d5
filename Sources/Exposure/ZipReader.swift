import CZlib

/// Reads the members of a zip archive held in memory: stored and deflated members (all that key
/// export files use), checked against their CRC-32. No zip64, no encryption, no multi-disk
/// archives: a key export is two small files.
public struct ZipReader {
    public struct Member: Sendable {
        public var name: String
        public var method: UInt16
        public var compressedSize: Int
        public var size: Int
        public var crc: UInt32
        var localHeaderOffset: Int
    }

    /// The most a member may inflate to (a day of a large country's keys is a few MB).
    public static let maximumMemberBytes = 64 << 20

    public let members: [Member]
    private let bytes: [UInt8]

    public init(_ bytes: [UInt8]) throws(ExposureFileError) {
        self.bytes = bytes
        // End of central directory: 22 bytes plus a comment of at most 65,535.
        let eocdSignature: UInt32 = 0x0605_4b50
        var eocd: Int?
        if bytes.count >= 22 {
            var at = bytes.count - 22
            let lowest = max(0, bytes.count - 22 - 65_535)
            while at >= lowest {
                if Self.u32(bytes, at) == eocdSignature { eocd = at; break }
                at -= 1
            }
        }
        guard let eocd else { throw .badZip("no end of central directory: not a zip file, or truncated") }
        let count = Int(Self.u16(bytes, eocd + 10))
        let directorySize = Int(Self.u32(bytes, eocd + 12))
        let directoryOffset = Int(Self.u32(bytes, eocd + 16))
        guard directoryOffset + directorySize <= eocd else { throw .badZip("the central directory lies outside the file (truncated?)") }
        var members: [Member] = []
        var at = directoryOffset
        for _ in 0..<count {
            guard at + 46 <= eocd, Self.u32(bytes, at) == 0x0201_4b50 else { throw .badZip("a central directory entry is damaged") }
            let flags = Self.u16(bytes, at + 8)
            let method = Self.u16(bytes, at + 10)
            let crc = Self.u32(bytes, at + 16)
            let compressed = Int(Self.u32(bytes, at + 20))
            let size = Int(Self.u32(bytes, at + 24))
            let nameLength = Int(Self.u16(bytes, at + 28))
            let extraLength = Int(Self.u16(bytes, at + 30))
            let commentLength = Int(Self.u16(bytes, at + 32))
            let offset = Int(Self.u32(bytes, at + 42))
            guard at + 46 + nameLength <= eocd else { throw .badZip("a central directory entry is damaged") }
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            guard flags & 1 == 0 else { throw .badZip("member \(name) is encrypted") }
            members.append(Member(name: name, method: method, compressedSize: compressed, size: size, crc: crc, localHeaderOffset: offset))
            at += 46 + nameLength + extraLength + commentLength
        }
        self.members = members
    }

    /// The uncompressed bytes of the member called `name`; nil when there is none.
    public func read(_ name: String) throws(ExposureFileError) -> [UInt8]? {
        guard let member = members.first(where: { $0.name == name }) else { return nil }
        let at = member.localHeaderOffset
        guard at + 30 <= bytes.count, Self.u32(bytes, at) == 0x0403_4b50 else {
            throw .badZip("\(name): local header missing (truncated?)")
        }
        let start = at + 30 + Int(Self.u16(bytes, at + 26)) + Int(Self.u16(bytes, at + 28))
        guard start + member.compressedSize <= bytes.count else { throw .badZip("\(name) is truncated") }
        guard member.size <= Self.maximumMemberBytes else {
            throw .badZip("\(name) would be \(member.size) bytes; at most \(Self.maximumMemberBytes) are read")
        }
        let data = bytes[start..<(start + member.compressedSize)]
        let out: [UInt8]
        switch member.method {
        case 0:
            guard member.compressedSize == member.size else { throw .badZip("\(name): stored member with two sizes") }
            out = Array(data)
        case 8:
            out = try Self.inflate(data, size: member.size, name: name)
        default:
            throw .badZip("\(name) uses compression method \(member.method); only stored (0) and deflate (8) are read")
        }
        let crc = out.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
        guard crc == member.crc else { throw .badZip("\(name): CRC-32 mismatch (damaged archive)") }
        return out
    }

    static func inflate(_ input: ArraySlice<UInt8>, size: Int, name: String) throws(ExposureFileError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .badZip("\(name): zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: size)
        var input = Array(input)
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == size else {
            throw .badZip("\(name): the deflated data is damaged or truncated")
        }
        return output
    }

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 {
        guard at + 2 <= b.count else { return 0 }
        return UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        guard at >= 0, at + 4 <= b.count else { return 0 }
        return UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}
