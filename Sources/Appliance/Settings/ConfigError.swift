/// One problem in the config file: which file, which key, what was written there and what is
/// allowed. Printed as `FILE: KEY = VALUE: PROBLEM`, so an operator can fix it without a manual.
public struct ConfigProblem: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    /// Dotted key (`diary.check_in_seconds`), a section (`[gpio]`), or nil for the whole file.
    public var key: String?
    /// The value as written in the file, rendered as TOML; nil when the key is missing.
    public var value: String?
    public var problem: String

    public init(file: String, key: String?, value: String?, problem: String) {
        self.file = file
        self.key = key
        self.value = value
        self.problem = problem
    }

    /// Values longer than this are cut in messages (a pasted megabyte must not flood the log).
    static let shownValueCharacters = 120

    public var description: String { "\(file): \(detail)" }

    /// The problem without the file's name: `KEY = VALUE: PROBLEM`.
    public var detail: String {
        switch (key, value) {
        case let (key?, value?):
            let shown = value.count <= Self.shownValueCharacters
                ? value : "\(value.prefix(Self.shownValueCharacters))… (\(value.utf8.count) bytes in all)"
            return "\(key) = \(shown): \(problem)"
        case let (key?, nil): return "\(key): \(problem)"
        default: return problem
        }
    }
}

/// Every problem found in one config file. Validation reports them all at once, so one edit
/// fixes everything rather than one restart per mistake.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(_ problems: [ConfigProblem]) { self.problems = problems }

    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
