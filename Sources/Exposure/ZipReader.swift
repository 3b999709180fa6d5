import CZlib

/// Reads the members of a zip archive: stored and deflated members (all that key export files
/// use), checked against their CRC-32. No zip64, no encryption, no multi-disk archives: a key
/// export is two small files.
///
/// The archive is read through `readAt` (bytes at an offset), never whole: the end of central
/// directory from the last 64 KiB + 22 bytes, the central directory (at most
/// ``maximumDirectoryBytes``), then each member asked for by its offset (at most
/// ``maximumMemberBytes`` inflated), read and inflated ``chunkBytes`` at a time and handed on in
/// pieces (``stream(_:_:)``). ``KeyFile`` reads a file this way with `pread`; an archive held in
/// memory is read from its array.
public struct ZipReader {
    public struct Member: Sendable {
        public var name: String
        public var method: UInt16
        public var compressedSize: Int
        public var size: Int
        public var crc: UInt32
        var localHeaderOffset: Int
    }

    /// Reads `count` bytes at `offset` (both within the archive's size): all of them, or throws.
    public typealias ReadAt = (_ offset: Int, _ count: Int) throws(ExposureFileError) -> [UInt8]

    /// The most a member may inflate to (a day of a large country's keys is a few MB).
    public static let maximumMemberBytes = 64 << 20
    /// The most a central directory may take (a key export's names two members in about 120 bytes).
    public static let maximumDirectoryBytes = 1 << 20
    static let zip64Refusal = ExposureFileError.badZip("zip64 archives are not key export files")

    public let members: [Member]
    /// The archive's size in bytes.
    public let size: Int
    private let readAt: ReadAt

    /// An archive held in memory.
    public init(_ bytes: [UInt8]) throws(ExposureFileError) {
        try self.init(size: bytes.count) { (offset, count) throws(ExposureFileError) in
            guard offset >= 0, count >= 0, offset + count <= bytes.count else { throw .badZip("truncated") }
            return Array(bytes[offset..<(offset + count)])
        }
    }

    /// An archive of `size` bytes read through `readAt`.
    public init(size: Int, readAt: @escaping ReadAt) throws(ExposureFileError) {
        self.size = size
        self.readAt = readAt
        // End of central directory: 22 bytes plus a comment of at most 65,535.
        let eocdSignature: UInt32 = 0x0605_4b50
        let tailLength = min(size, 22 + 65_535)
        let tailStart = size - tailLength
        let tail = try tailLength > 0 ? readAt(tailStart, tailLength) : []
        var found: Int?
        if tail.count >= 22 {
            var at = tail.count - 22
            while at >= 0 {
                if Self.u32(tail, at) == eocdSignature { found = at; break }
                at -= 1
            }
        }
        guard let found else { throw .badZip("no end of central directory: not a zip file, or truncated") }
        let eocd = tailStart + found
        let count = Int(Self.u16(tail, found + 10))
        let directorySize = Int(Self.u32(tail, found + 12))
        let directoryOffset = Int(Self.u32(tail, found + 16))
        // Zip64: the fields too small for the archive say so with all ones, and a zip64 end of
        // central directory locator (20 bytes) comes just before the end of central directory.
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF
            || (found >= 20 && Self.u32(tail, found - 20) == 0x0706_4b50)
        {
            throw Self.zip64Refusal
        }
        guard directoryOffset + directorySize <= eocd else { throw .badZip("the central directory lies outside the file (truncated?)") }
        guard directorySize <= Self.maximumDirectoryBytes else {
            throw .badZip("the central directory takes \(directorySize) bytes; at most \(Self.maximumDirectoryBytes) are read")
        }
        let directory = try readAt(directoryOffset, directorySize)
        var members: [Member] = []
        var at = 0
        for _ in 0..<count {
            guard at + 46 <= directory.count, Self.u32(directory, at) == 0x0201_4b50 else { throw .badZip("a central directory entry is damaged") }
            let flags = Self.u16(directory, at + 8)
            let method = Self.u16(directory, at + 10)
            let crc = Self.u32(directory, at + 16)
            let compressed = Int(Self.u32(directory, at + 20))
            let size = Int(Self.u32(directory, at + 24))
            let nameLength = Int(Self.u16(directory, at + 28))
            let extraLength = Int(Self.u16(directory, at + 30))
            let commentLength = Int(Self.u16(directory, at + 32))
            let offset = Int(Self.u32(directory, at + 42))
            guard at + 46 + nameLength <= directory.count else { throw .badZip("a central directory entry is damaged") }
            if compressed == 0xFFFF_FFFF || size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF { throw Self.zip64Refusal }
            let name = String(decoding: directory[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            guard flags & 1 == 0 else { throw .badZip("member \(name) is encrypted") }
            members.append(Member(name: name, method: method, compressedSize: compressed, size: size, crc: crc, localHeaderOffset: offset))
            at += 46 + nameLength + extraLength + commentLength
        }
        self.members = members
    }

    /// The size of the pieces a member is read and handed out in.
    public static let chunkBytes = 64 << 10

    /// Whether the archive has a member called `name`.
    public func contains(_ name: String) -> Bool { members.contains { $0.name == name } }

    /// The uncompressed bytes of the member called `name`, whole; nil when there is none. For small
    /// members (export.sig); ``stream(_:_:)`` reads one without holding it.
    public func read(_ name: String) throws(ExposureFileError) -> [UInt8]? {
        guard contains(name) else { return nil }
        var out: [UInt8] = []
        try stream(name) { out += $0 }
        return out
    }

    /// Hands the member called `name`, uncompressed, to `body` in pieces of at most
    /// ``chunkBytes``, in order, as it is read and inflated: at most one piece of it and one of its
    /// compressed bytes are held at a time. Its CRC-32 and size are checked at its end: a damaged
    /// member throws after `body` has seen its bytes, so what `body` makes of them counts only once
    /// this returns. Throws ``ExposureFileError/missingMember(_:)`` when there is no such member.
    public func stream(_ name: String, _ body: (ArraySlice<UInt8>) -> Void) throws(ExposureFileError) {
        guard let member = members.first(where: { $0.name == name }) else { throw .missingMember(name) }
        let at = member.localHeaderOffset
        guard at + 30 <= size else { throw .badZip("\(name): local header missing (truncated?)") }
        let header = try readAt(at, 30)
        guard Self.u32(header, 0) == 0x0403_4b50 else { throw .badZip("\(name): local header missing (truncated?)") }
        let start = at + 30 + Int(Self.u16(header, 26)) + Int(Self.u16(header, 28))
        guard start + member.compressedSize <= size else { throw .badZip("\(name) is truncated") }
        // Deflate can take a little more than the data it holds (5 bytes per stored block of 64 KiB).
        guard member.size <= Self.maximumMemberBytes, member.compressedSize <= Self.maximumMemberBytes + Self.maximumMemberBytes / 1000 + 64
        else {
            throw .badZip("\(name) would be \(member.size) bytes; at most \(Self.maximumMemberBytes) are read")
        }
        var crc = UInt32(crc32(0, nil, 0))
        func checked(_ piece: ArraySlice<UInt8>) {
            crc = piece.withUnsafeBufferPointer { UInt32(crc32(UInt(crc), $0.baseAddress, UInt32($0.count))) }
            body(piece)
        }
        // The compressed bytes, a piece at a time.
        var offset = start
        let end = start + member.compressedSize
        func next() throws(ExposureFileError) -> [UInt8]? {
            guard offset < end else { return nil }
            let count = min(Self.chunkBytes, end - offset)
            defer { offset += count }
            return try readAt(offset, count)
        }
        switch member.method {
        case 0:
            guard member.compressedSize == member.size else { throw .badZip("\(name): stored member with two sizes") }
            while let piece = try next() { checked(piece[...]) }
        case 8:
            let inflater = try Inflater(name: name, size: member.size)
            while let piece = try next() { try inflater.feed(piece[...], checked) }
            try inflater.finish()
        default:
            throw .badZip("\(name) uses compression method \(member.method); only stored (0) and deflate (8) are read")
        }
        guard crc == member.crc else { throw .badZip("\(name): CRC-32 mismatch (damaged archive)") }
    }

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 {
        guard at >= 0, at + 2 <= b.count else { return 0 }
        return UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 {
        guard at >= 0, at + 4 <= b.count else { return 0 }
        return UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}
