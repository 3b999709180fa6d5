import TOMLKit

/// Collects problems while a config file is read, so that every section can be checked in one go.
final class ConfigProblems {
    let file: String
    private(set) var list: [ConfigProblem] = []

    init(file: String) { self.file = file }

    func add(key: String?, value: String?, problem: String) {
        list.append(ConfigProblem(file: file, key: key, value: value, problem: problem))
    }
}

/// Typed, validating access to one `[section]` of the config file.
///
/// Every accessor records a problem (naming the key, the value as written and what is allowed)
/// and returns the default instead of throwing, so all mistakes are reported together.
/// `finish()` reports keys that no accessor asked for: an unknown key is a mistake, usually a typo.
struct ConfigSection {
    let name: String
    private let table: TOMLTable?
    private let problems: ConfigProblems
    private var known: [String] = []

    init(_ name: String, in root: TOMLTable, problems: ConfigProblems) {
        self.name = name
        self.problems = problems
        if let value = root[name] {
            if let table = value.table {
                self.table = table
            } else {
                problems.add(key: name, value: ConfigSection.render(value), problem: "must be a table: write it as [\(name)]")
                self.table = nil
            }
        } else {
            self.table = nil
        }
    }

    func path(_ key: String) -> String { "\(name).\(key)" }

    /// Whether the file has this section at all (optional sections such as `[schedule]`).
    var isPresent: Bool { table != nil }

    mutating func raw(_ key: String) -> TOMLValueConvertible? {
        known.append(key)
        return table?[key]
    }

    private func problem(_ key: String, _ value: TOMLValueConvertible?, _ text: String) {
        problems.add(key: path(key), value: value.map(ConfigSection.render), problem: text)
    }

    /// A whole number in `range`. Absent: `defaultValue` (nil = required when `required`).
    mutating func int(_ key: String, default defaultValue: Int?, range: ClosedRange<Int>, unit: String = "") -> Int? {
        let allowed = "must be a whole number\(unit.isEmpty ? "" : " of \(unit)") from \(range.lowerBound) to \(range.upperBound)"
        guard let value = raw(key) else { return defaultValue }
        guard let number = value.int else {
            problem(key, value, allowed)
            return defaultValue
        }
        guard range.contains(number) else {
            problem(key, value, allowed)
            return defaultValue
        }
        return number
    }

    /// A required whole number in `range`.
    mutating func requiredInt(_ key: String, range: ClosedRange<Int>) -> Int? {
        if table?[key] == nil {
            known.append(key)
            problems.add(key: path(key), value: nil, problem: "is required (a whole number from \(range.lowerBound) to \(range.upperBound))")
            return nil
        }
        return int(key, default: nil, range: range)
    }

    /// A whole number in `range`, or one of the given words (e.g. `"forever"`).
    /// Returns `.absent` when the key is not there.
    mutating func intOrWord(_ key: String, range: ClosedRange<Int>, words: [String], unit: String) -> IntOrWord {
        let quoted = words.map { "\"\($0)\"" }.joined(separator: " or ")
        let allowed = "must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound), or \(quoted)"
        guard let value = raw(key) else { return .absent }
        if let number = value.int, range.contains(number) { return .number(number) }
        if let word = value.string, words.contains(word) { return .word(word) }
        problem(key, value, allowed)
        return .invalid
    }

    enum IntOrWord: Equatable { case absent, invalid, number(Int), word(String) }

    mutating func bool(_ key: String, default defaultValue: Bool) -> Bool {
        guard let value = raw(key) else { return defaultValue }
        guard let flag = value.bool else {
            problem(key, value, "must be true or false")
            return defaultValue
        }
        return flag
    }

    /// A string; `validate` returns nil when fine or the description of what is allowed.
    mutating func string(_ key: String, default defaultValue: String?, validate: (String) -> String? = { _ in nil }) -> String? {
        guard let value = raw(key) else { return defaultValue }
        guard let text = value.string else {
            problem(key, value, "must be a string in double quotes")
            return defaultValue
        }
        if let allowed = validate(text) {
            problem(key, value, allowed)
            return defaultValue
        }
        return text
    }

    /// A list of strings (`["a", "b"]`); a single string counts as a list of one. `validate`
    /// checks each element and returns nil when fine or what is allowed.
    mutating func strings(_ key: String, validate: (String) -> String? = { _ in nil }) -> [String] {
        guard let value = raw(key) else { return [] }
        let elements: [TOMLValueConvertible]
        if let single = value.string {
            elements = [single]
        } else if let array = value.array {
            elements = Array(array)
        } else {
            problem(key, value, "must be a list of strings such as [\"a\", \"b\"]")
            return []
        }
        var out: [String] = []
        for element in elements {
            guard let text = element.string else {
                problem(key, element, "must be a list of strings such as [\"a\", \"b\"]")
                continue
            }
            if let allowed = validate(text) {
                problems.add(key: path(key), value: ConfigSection.render(element), problem: allowed)
                continue
            }
            out.append(text)
        }
        return out
    }

    mutating func requiredString(_ key: String, what: String, validate: (String) -> String? = { _ in nil }) -> String? {
        if table?[key] == nil {
            known.append(key)
            problems.add(key: path(key), value: nil, problem: "is required (\(what))")
            return nil
        }
        return string(key, default: nil, validate: validate)
    }

    /// One of a fixed set of words.
    mutating func choice(_ key: String, default defaultValue: String, allowed: [String]) -> String {
        string(key, default: defaultValue) { text in
            allowed.contains(text) ? nil : "must be one of " + allowed.map { "\"\($0)\"" }.joined(separator: ", ")
        } ?? defaultValue
    }

    /// A GPIO line: a line name such as `"GPIO17"` or an offset on the chip (0–1023).
    mutating func gpioLine(_ key: String) -> GPIOLine? {
        guard let value = raw(key) else { return nil }
        if let offset = value.int, (0...1023).contains(offset) { return .offset(offset) }
        if let name = value.string, !name.isEmpty, name.count <= 31 { return .name(name) }
        problem(key, value, "must be a line name such as \"GPIO17\" or a line offset from 0 to 1023")
        return nil
    }

    /// Reports a problem found by a check that spans several keys.
    func report(_ key: String, value: String?, problem: String) {
        problems.add(key: path(key), value: value, problem: problem)
    }

    /// Reports keys in this section that no accessor asked for.
    func finish() {
        guard let table else { return }
        for key in table.keys where !known.contains(key) {
            let allowed = known.joined(separator: ", ")
            let guess = known.min { editDistance($0, key) < editDistance($1, key) }.flatMap { editDistance($0, key) <= 3 ? $0 : nil }
            let hint = guess.map { "did you mean \($0)? " } ?? ""
            problems.add(
                key: path(key), value: table[key].map(ConfigSection.render),
                problem: "unknown key; \(hint)[\(name)] allows \(allowed)")
        }
    }

    /// A TOML value as it would be written in the file.
    static func render(_ value: TOMLValueConvertible) -> String {
        if let s = value.string { return TOMLText.quote(s) }
        if let i = value.int { return String(i) }
        if let b = value.bool { return String(b) }
        if let d = value.double { return String(d) }
        if let t = value.table { return "{" + t.keys.map { "\($0) = \(t[$0].map(render) ?? "")" }.joined(separator: ", ") + "}" }
        if let a = value.array { return "[" + a.map { render($0) }.joined(separator: ", ") + "]" }
        return value.debugDescription
    }
}

/// Levenshtein distance, to suggest the key an unknown key was probably meant to be.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    var previous = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...max(b.count, 1) where !b.isEmpty {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return a.isEmpty ? b.count : previous[b.count]
}

/// TOML text helpers for rendering effective settings.
enum TOMLText {
    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
