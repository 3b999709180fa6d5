/// A bounds-checked, copy-free cursor over bytes received from the air, a controller or a file.
///
/// Every read either returns a value and moves the cursor, or throws ``DecodeError`` and leaves the
/// cursor where it was. Multi-byte integers are little-endian (Bluetooth's byte order) unless the
/// method name says otherwise. Slicing shares the storage of the input: no allocation per read.
public struct ByteReader: Sendable {
    public var bytes: ArraySlice<UInt8>

    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// Bytes not yet read.
    @inlinable public var remaining: Int { bytes.count }
    @inlinable public var isEmpty: Bool { bytes.isEmpty }

    @inlinable
    mutating func require(_ count: Int, _ field: StaticString) throws(DecodeError) {
        // The check is inlined into every read; building the error (string formatting) is not.
        if bytes.count < count { throw Self.shortfall(count, field, left: bytes.count) }
    }

    @usableFromInline
    static func shortfall(_ count: Int, _ field: StaticString, left: Int) -> DecodeError {
        DecodeError(.truncated, field: field, detail: "needs \(count) bytes, \(left) left")
    }

    @inlinable
    public mutating func readU8(_ field: StaticString = "u8") throws(DecodeError) -> UInt8 {
        try require(1, field)
        return bytes.removeFirst()
    }

    @inlinable
    public mutating func readI8(_ field: StaticString = "i8") throws(DecodeError) -> Int8 {
        Int8(bitPattern: try readU8(field))
    }

    @inlinable
    public mutating func readLE16(_ field: StaticString = "u16") throws(DecodeError) -> UInt16 {
        try require(2, field)
        let i = bytes.startIndex
        let value = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
        bytes = bytes.dropFirst(2)
        return value
    }

    @inlinable
    public mutating func readLE24(_ field: StaticString = "u24") throws(DecodeError) -> UInt32 {
        try require(3, field)
        let i = bytes.startIndex
        let value = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16
        bytes = bytes.dropFirst(3)
        return value
    }

    @inlinable
    public mutating func readLE32(_ field: StaticString = "u32") throws(DecodeError) -> UInt32 {
        try require(4, field)
        let i = bytes.startIndex
        var value: UInt32 = 0
        for k in 0..<4 { value |= UInt32(bytes[i + k]) << (8 * UInt32(k)) }
        bytes = bytes.dropFirst(4)
        return value
    }

    @inlinable
    public mutating func readLE64(_ field: StaticString = "u64") throws(DecodeError) -> UInt64 {
        try require(8, field)
        let i = bytes.startIndex
        var value: UInt64 = 0
        for k in 0..<8 { value |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
        bytes = bytes.dropFirst(8)
        return value
    }

    @inlinable
    public mutating func readBE32(_ field: StaticString = "u32be") throws(DecodeError) -> UInt32 {
        try require(4, field)
        let i = bytes.startIndex
        var value: UInt32 = 0
        for k in 0..<4 { value = value << 8 | UInt32(bytes[i + k]) }
        bytes = bytes.dropFirst(4)
        return value
    }

    /// The next `count` bytes, sharing storage with the input.
    @inlinable
    public mutating func readBytes(_ count: Int, _ field: StaticString = "bytes") throws(DecodeError) -> ArraySlice<UInt8> {
        guard count >= 0 else { throw DecodeError(.invalidValue, field: field, detail: "negative length \(count)") }
        try require(count, field)
        let slice = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return slice
    }

    /// Everything that is left.
    @inlinable
    public mutating func readRest() -> ArraySlice<UInt8> {
        let slice = bytes
        bytes = bytes[bytes.endIndex...]
        return slice
    }

    @inlinable
    public mutating func skip(_ count: Int, _ field: StaticString = "skip") throws(DecodeError) {
        try require(count, field)
        bytes = bytes.dropFirst(count)
    }

    @inlinable
    public func peekU8() -> UInt8? { bytes.first }

    /// Throws unless every byte was read: for PDUs whose length is fixed by the protocol.
    @inlinable
    public func expectEnd(_ field: StaticString) throws(DecodeError) {
        if !bytes.isEmpty {
            throw DecodeError(.lengthMismatch, field: field, detail: "\(bytes.count) unexpected trailing bytes")
        }
    }
}

/// Why bytes could not be decoded. Small and `Hashable`, so tests can compare errors exactly.
public struct DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// Fewer bytes than the field needs.
        case truncated
        /// The bytes are there but their value is not allowed.
        case invalidValue
        /// A length field disagrees with the bytes present, or there are bytes left over.
        case lengthMismatch
    }

    public var kind: Kind
    public var field: String
    public var detail: String

    @inlinable
    public init(_ kind: Kind, field: StaticString, detail: String = "") {
        self.kind = kind
        self.field = "\(field)"
        self.detail = detail
    }

    public init(_ kind: Kind, field: String, detail: String = "") {
        self.kind = kind
        self.field = field
        self.detail = detail
    }

    public var description: String {
        let what: String
        switch kind {
        case .truncated: what = "truncated"
        case .invalidValue: what = "invalid value"
        case .lengthMismatch: what = "length mismatch"
        }
        return detail.isEmpty ? "\(field): \(what)" : "\(field): \(what) (\(detail))"
    }
}
