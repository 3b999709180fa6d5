import CivilDate

/// Writes export text into memory reserved up front, without a capacity check per byte: an
/// export formats about 350 bytes for each of a million visits. Callers reserve an upper bound
/// with `[UInt8].write(upTo:_:)`; every method documents how many bytes it may write.
struct TextWriter {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0

    fileprivate init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// Upper bounds, in bytes, of what the methods below write.
    static let integerBytes = 20
    static let timeBytes = 20
    static let oneDecimalBytes = 22

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        assert(count < capacity, "TextWriter overflow")
        base[count] = value
        count += 1
    }

    /// Writes `text.utf8.count` bytes.
    mutating func text(_ text: String) {
        for value in text.utf8 { byte(value) }
    }

    /// Writes at most ``integerBytes`` bytes.
    mutating func integer(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = count
        repeat {
            byte(UInt8(truncatingIfNeeded: 48 + magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        var low = start
        var high = count - 1
        while low < high {
            (base[low], base[high]) = (base[high], base[low])
            low += 1
            high -= 1
        }
    }

    /// Lowercase hex: writes `2 × bytes.count` bytes.
    mutating func hex(_ bytes: UnsafeRawBufferPointer) {
        for value in bytes {
            byte(Self.hexDigit(value >> 4))
            byte(Self.hexDigit(value & 0x0F))
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 48 + nibble : 87 + nibble
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of whole seconds within 1970…9999: writes ``timeBytes`` bytes.
    mutating func time(_ seconds: Int) {
        let time = CivilTime(unixSeconds: max(0, min(seconds, UTCTime.latestSecond)))
        digits(time.date.year / 100)
        digits(time.date.year % 100)
        byte(UInt8(ascii: "-"))
        digits(time.date.month)
        byte(UInt8(ascii: "-"))
        digits(time.date.day)
        byte(UInt8(ascii: "T"))
        digits(time.hour)
        byte(UInt8(ascii: ":"))
        digits(time.minute)
        byte(UInt8(ascii: ":"))
        digits(time.second)
        byte(UInt8(ascii: "Z"))
    }

    /// Two digits of 0…99.
    @inline(__always)
    private mutating func digits(_ value: Int) {
        byte(UInt8(truncatingIfNeeded: 48 + value / 10))
        byte(UInt8(truncatingIfNeeded: 48 + value % 10))
    }

    /// `numerator / denominator` rounded half away from zero to one decimal, e.g. `-61.7`
    /// (`0.0` for a zero denominator): writes at most ``oneDecimalBytes`` bytes.
    mutating func oneDecimal(numerator: Int, denominator: Int) {
        guard denominator > 0 else {
            text("0.0")
            return
        }
        let tenths = (2 * (numerator.magnitude * 10) + denominator.magnitude) / (2 * denominator.magnitude)
        if numerator < 0 && tenths > 0 { byte(UInt8(ascii: "-")) }
        integer(Int(tenths / 10))
        byte(UInt8(ascii: "."))
        byte(UInt8(truncatingIfNeeded: 48 + tenths % 10))
    }

    /// A JSON string literal (RFC 8259 escaping) or `null`: writes at most
    /// `6 × text.utf8.count + 4` bytes.
    mutating func jsonString(_ text: String?) {
        guard let text else {
            self.text("null")
            return
        }
        byte(UInt8(ascii: "\""))
        for value in text.utf8 {
            switch value {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                byte(UInt8(ascii: "\\"))
                byte(value)
            case 0x0A: self.text("\\n")
            case 0x0D: self.text("\\r")
            case 0x09: self.text("\\t")
            case 0x00..<0x20:
                self.text("\\u00")
                byte(Self.hexDigit(value >> 4))
                byte(Self.hexDigit(value & 0x0F))
            default:
                byte(value)
            }
        }
        byte(UInt8(ascii: "\""))
    }

    /// A quoted JSON time or `null`: writes at most ``timeBytes`` + 2 bytes.
    mutating func jsonTime(_ time: Double?) {
        guard let time else {
            text("null")
            return
        }
        byte(UInt8(ascii: "\""))
        self.time(UTCTime.wholeSeconds(time))
        byte(UInt8(ascii: "\""))
    }
}

extension [UInt8] {
    /// Reserves `maxBytes` at the end, lets `body` write at most that many, keeps what it wrote.
    mutating func write(upTo maxBytes: Int, _ body: (inout TextWriter) -> Void) {
        let start = count
        append(contentsOf: repeatElement(0, count: maxBytes))
        let written = withUnsafeMutableBufferPointer { all -> Int in
            guard let base = all.baseAddress else { return 0 }
            var writer = TextWriter(base: base + start, capacity: maxBytes)
            body(&writer)
            return writer.count
        }
        removeLast(maxBytes - written)
    }
}
