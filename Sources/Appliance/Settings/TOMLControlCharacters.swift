import Foundation

/// Finds escapes of control characters (`\u0000`–`\u001F`, `\u007F`, and the `\U` forms) in
/// the basic strings of TOML text. The TOML parser accepts them, and one of them, NUL, cuts the
/// string short on its way to Swift (`name = "Bar\u0000 Evil"` would read as `"Bar"`): the
/// settings would silently differ from the file. A small scan of strings and comments, not a
/// second parser: it only needs to know what is inside a basic string.
enum TOMLControlCharacters {
    struct Found: Equatable {
        /// `section.key` (or the key alone before any section) where the string starts.
        var key: String?
        /// 1-based line of the escape.
        var line: Int
        /// The escape as written, e.g. `\u0000`.
        var escape: String
    }

    static func find(in text: String) -> [Found] {
        let c = Array(text.utf8)
        var found: [Found] = []
        var i = 0
        var line = 1
        var section: String?
        var lineStart = 0
        var stringKey: String?

        func at(_ j: Int, _ s: String) -> Bool {
            let bytes = Array(s.utf8)
            return j + bytes.count <= c.count && Array(c[j..<j + bytes.count]) == bytes
        }
        func keyBefore(_ j: Int) -> String? {
            let prefix = String(decoding: c[lineStart..<j], as: UTF8.self)
            guard let equals = prefix.firstIndex(of: "=") else { return nil }
            let key = prefix[..<equals].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { return nil }
            return section.map { "\($0).\(key)" } ?? key
        }
        func isControl(_ hex: [UInt8]) -> Bool {
            guard let value = UInt32(String(decoding: hex, as: UTF8.self), radix: 16) else { return false }
            return value < 0x20 || value == 0x7F
        }
        func newline() {
            line += 1
            lineStart = i + 1
        }

        while i < c.count {
            let byte = c[i]
            if byte == UInt8(ascii: "\n") {
                newline()
                i += 1
            } else if byte == UInt8(ascii: "#") {
                while i < c.count, c[i] != UInt8(ascii: "\n") { i += 1 }
            } else if byte == UInt8(ascii: "[") && String(decoding: c[lineStart..<i], as: UTF8.self).allSatisfy(\.isWhitespace) {
                var j = i
                while j < c.count, c[j] != UInt8(ascii: "]"), c[j] != UInt8(ascii: "\n") { j += 1 }
                section = String(decoding: c[i..<j], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "[] \t"))
                i = j
            } else if at(i, "'''") || byte == UInt8(ascii: "'") {
                let end = at(i, "'''") ? "'''" : "'"
                i += end.utf8.count
                while i < c.count, !at(i, end) {
                    if c[i] == UInt8(ascii: "\n") { newline() }
                    i += 1
                }
                i += end.utf8.count
            } else if byte == UInt8(ascii: "\"") {
                let end = at(i, "\"\"\"") ? "\"\"\"" : "\""
                stringKey = keyBefore(i)
                i += end.utf8.count
                while i < c.count, !at(i, end) {
                    if c[i] == UInt8(ascii: "\\"), i + 1 < c.count {
                        let kind = c[i + 1]
                        let digits = kind == UInt8(ascii: "u") ? 4 : kind == UInt8(ascii: "U") ? 8 : 0
                        if digits > 0, i + 2 + digits <= c.count, isControl(Array(c[i + 2..<i + 2 + digits])) {
                            found.append(Found(key: stringKey, line: line, escape: String(decoding: c[i..<i + 2 + digits], as: UTF8.self)))
                        }
                        i += 2
                        continue
                    }
                    if c[i] == UInt8(ascii: "\n") { newline() }
                    i += 1
                }
                i += end.utf8.count
            } else {
                i += 1
            }
        }
        return found
    }
}
