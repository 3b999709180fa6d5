/// Why a replication message could not be read: it is dropped and counted, never half applied.
public struct WireFormatError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Big-endian writing of the replication messages' fields.
struct WireWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes.append(UInt8(value >> 8)); bytes.append(UInt8(value & 0xFF)) }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) } }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func double(_ value: Double) { u64(value.bitPattern) }
    /// A string of at most 255 UTF-8 bytes, length first.
    mutating func shortString(_ value: String) {
        let utf8 = Array(value.utf8.prefix(255))
        u8(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }
    /// Bytes of at most 65,535, length first.
    mutating func data(_ value: [UInt8]) {
        let count = min(value.count, 0xFFFF)
        u16(UInt16(count))
        bytes.append(contentsOf: value.prefix(count))
    }
}

/// Big-endian reading that throws ``WireFormatError`` naming the field, never traps. Field names
/// are made only for a message (a hub decodes tens of thousands of visits a second).
struct WireReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int, _ field: @autoclosure () -> String) throws -> ArraySlice<UInt8> {
        guard count <= remaining else {
            throw WireFormatError("truncated at \(field()): \(count) bytes needed, \(remaining) left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8(_ field: @autoclosure () -> String) throws -> UInt8 { try take(1, field()).first! }
    mutating func u16(_ field: @autoclosure () -> String) throws -> UInt16 { try take(2, field()).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32(_ field: @autoclosure () -> String) throws -> UInt32 { try take(4, field()).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64(_ field: @autoclosure () -> String) throws -> UInt64 { try take(8, field()).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func i64(_ field: @autoclosure () -> String) throws -> Int64 { Int64(bitPattern: try u64(field())) }

    /// A finite time or number.
    mutating func double(_ field: @autoclosure () -> String) throws -> Double {
        let value = Double(bitPattern: try u64(field()))
        guard value.isFinite else { throw WireFormatError("\(field()) is not a finite number") }
        return value
    }

    mutating func shortString(_ field: @autoclosure () -> String) throws -> String {
        let count = Int(try u8(field() + " length"))
        guard let text = String(validating: try take(count, field()), as: UTF8.self) else {
            throw WireFormatError("\(field()) is not UTF-8")
        }
        return text
    }

    mutating func data(_ field: @autoclosure () -> String) throws -> [UInt8] {
        let count = Int(try u16(field() + " length"))
        return Array(try take(count, field()))
    }

    func finish(_ message: String) throws {
        guard remaining == 0 else { throw WireFormatError("\(remaining) bytes after the end of the \(message)") }
    }
}
