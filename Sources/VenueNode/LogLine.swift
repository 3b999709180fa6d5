/// A line for the service's log, from a pure part of the node (the shell writes it).
public struct LogLine: Sendable, Hashable, CustomStringConvertible {
    public enum Level: Sendable, Hashable { case debug, info, notice, warning, error }

    public var level: Level
    public var text: String

    public init(_ level: Level, _ text: String) {
        self.level = level
        self.text = text
    }

    public var description: String { "\(level): \(text)" }
}
