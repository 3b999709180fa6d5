/// A small reader of the protobuf wire format, enough for the key export messages: varints,
/// fixed64/fixed32, and length-delimited fields. Unknown fields are skipped, as protobuf says.
struct ProtobufReader {
    enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case bytes(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    struct Truncated: Error {
        var what: String
    }

    private let bytes: ArraySlice<UInt8>
    private var at: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }

    /// The next field (number and value), nil at the end of the message.
    mutating func next() throws(Truncated) -> (field: Int, value: Value)? {
        guard at < bytes.endIndex else { return nil }
        let tag = try varint()
        let field = Int(tag >> 3)
        guard field > 0, field < 1 << 29 else { throw Truncated(what: "a field number of 0 or out of range") }
        switch tag & 7 {
        case 0: return (field, .varint(try varint()))
        case 1: return (field, .fixed64(try fixed(8)))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - at) else { throw Truncated(what: "field \(field) is longer than what is left") }
            let start = at
            at += Int(length)
            return (field, .bytes(bytes[start..<at]))
        case 5: return (field, .fixed32(UInt32(try fixed(4))))
        default: throw Truncated(what: "field \(field) has wire type \(tag & 7), which is not used here")
        }
    }

    private mutating func varint() throws(Truncated) -> UInt64 {
        guard let (value, end) = try Self.varint(bytes, at) else { throw Truncated(what: "a number runs past the end") }
        at = end
        return value
    }

    /// The varint at `at` and where it ends; nil when `bytes` ends first.
    private static func varint(_ bytes: ArraySlice<UInt8>, _ start: Int) throws(Truncated) -> (value: UInt64, end: Int)? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var at = start
        while true {
            guard at < bytes.endIndex else { return nil }
            let byte = bytes[at]
            at += 1
            guard shift < 64 else { throw Truncated(what: "a number is longer than 10 bytes") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return (value, at) }
            shift += 7
        }
    }

    /// The field that starts `bytes`, known from its first bytes: its number, wire type and
    /// length (tag and value, in bytes), without its value; nil while `bytes` ends before that is
    /// known. What ``next()`` refuses in a tag or a length is refused here the same way; a length
    /// beyond 2 GiB is refused as longer than what is left (no message it is read from is that
    /// long).
    static func head(_ bytes: ArraySlice<UInt8>) throws(Truncated) -> (field: Int, wire: UInt64, length: Int)? {
        let start = bytes.startIndex
        guard let (tag, afterTag) = try varint(bytes, start) else { return nil }
        let field = Int(tag >> 3)
        guard field > 0, field < 1 << 29 else { throw Truncated(what: "a field number of 0 or out of range") }
        switch tag & 7 {
        case 0:
            guard let (_, end) = try varint(bytes, afterTag) else { return nil }
            return (field, 0, end - start)
        case 1: return (field, 1, afterTag + 8 - start)
        case 2:
            guard let (length, end) = try varint(bytes, afterTag) else { return nil }
            guard length < 1 << 31 else { throw Truncated(what: "field \(field) is longer than what is left") }
            return (field, 2, end - start + Int(length))
        case 5: return (field, 5, afterTag + 4 - start)
        default: throw Truncated(what: "field \(field) has wire type \(tag & 7), which is not used here")
        }
    }

    private mutating func fixed(_ count: Int) throws(Truncated) -> UInt64 {
        guard bytes.endIndex - at >= count else { throw Truncated(what: "a fixed-size number runs past the end") }
        var value: UInt64 = 0
        for i in 0..<count { value |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
        at += count
        return value
    }
}

extension ProtobufReader.Value {
    var int32: Int32? {
        if case .varint(let v) = self { return Int32(truncatingIfNeeded: v) }
        return nil
    }

    var sint32: Int32? {
        if case .varint(let v) = self {
            let n = UInt32(truncatingIfNeeded: v)
            return Int32(bitPattern: (n >> 1) ^ (0 &- (n & 1)))
        }
        return nil
    }

    var data: ArraySlice<UInt8>? {
        if case .bytes(let b) = self { return b }
        return nil
    }

    var string: String? { data.map { String(decoding: $0, as: UTF8.self) } }

    var uint64: UInt64? {
        switch self {
        case .fixed64(let v), .varint(let v): return v
        default: return nil
        }
    }
}
