import Foundation

/// One line of `venue-beacon doctor`'s checklist: what was checked, what was found, and when it
/// is wrong, the fix. Counts and states only: nothing personal (no phone, no visit time).
public struct DoctorLine: Sendable, Equatable {
    public enum Verdict: String, Sendable, Equatable {
        /// ✓ works.
        case ok
        /// ✗ will not work until fixed.
        case problem
        /// – not checked, or not applicable (and why).
        case unchecked

        public var mark: String {
            switch self {
            case .ok: "✓"
            case .problem: "✗"
            case .unchecked: "–"
            }
        }
    }

    /// Short name of the check (`rfkill`, `clock`, `outbox`, …).
    public var check: String
    public var verdict: Verdict
    /// What was found, one sentence.
    public var found: String
    /// What to do, for a ✗ (and sometimes a hint for a –).
    public var fix: String?

    public init(_ check: String, _ verdict: Verdict, _ found: String, fix: String? = nil) {
        self.check = check
        self.verdict = verdict
        self.found = found
        self.fix = fix
    }

    static func ok(_ check: String, _ found: String) -> DoctorLine { DoctorLine(check, .ok, found) }
    static func problem(_ check: String, _ found: String, fix: String) -> DoctorLine { DoctorLine(check, .problem, found, fix: fix) }
    static func unchecked(_ check: String, _ found: String, fix: String? = nil) -> DoctorLine { DoctorLine(check, .unchecked, found, fix: fix) }
}

/// The whole checklist, as text (for a terminal and the status file) or JSON.
public struct DoctorReport: Sendable, Equatable {
    public var lines: [DoctorLine]

    public init(_ lines: [DoctorLine]) { self.lines = lines }

    /// Nothing is ✗.
    public var passed: Bool { !lines.contains { $0.verdict == .problem } }

    public var text: String {
        var out: [String] = []
        for line in lines {
            out.append("\(line.verdict.mark) \(line.check): \(line.found)")
            if let fix = line.fix { out.append("    fix: \(fix)") }
        }
        let problems = lines.filter { $0.verdict == .problem }.count
        out.append(problems == 0 ? "nothing wrong found" : "\(problems) \(problems == 1 ? "problem" : "problems") found")
        return out.joined(separator: "\n") + "\n"
    }

    public var json: String {
        func quoted(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                default:
                    if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
                }
            }
            return out + "\""
        }
        let items = lines.map { line in
            "{\"check\": \(quoted(line.check)), \"result\": \(quoted(line.verdict.rawValue)), \"mark\": \(quoted(line.verdict.mark)), "
                + "\"found\": \(quoted(line.found)), \"fix\": \(line.fix.map(quoted) ?? "null")}"
        }
        return "{\"passed\": \(passed), \"checks\": [\n  " + items.joined(separator: ",\n  ") + "\n]}\n"
    }
}
