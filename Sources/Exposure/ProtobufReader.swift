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
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < bytes.endIndex else { throw Truncated(what: "a number runs past the end") }
            let byte = bytes[at]
            at += 1
            guard shift < 64 else { throw Truncated(what: "a number is longer than 10 bytes") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
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
