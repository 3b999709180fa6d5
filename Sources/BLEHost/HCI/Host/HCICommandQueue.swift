/// The host's side of HCI command flow control, as a value: no I/O, time passed in.
///
/// Commands wait in FIFO order until the controller has a free command slot (`ncmd` from the
/// last Command Complete/Status, 1 at start) and fewer than ``maximumInFlight`` are
/// outstanding. A Command Complete or Command Status ends the oldest outstanding command with
/// the same opcode (Command Status 0 means "accepted, the result comes in a later event"; any
/// other status is a refusal). A command that gets no answer within ``timeout`` ends with
/// ``HCICommandResult/timedOut``: the controller is unresponsive and the owner should reset and
/// reopen it.
///
/// The queue only looks at Command Complete and Command Status; the owner passes it every event
/// and keeps handling the others itself, so nothing is thrown away while a command is pending.
public struct HCICommandQueue: Sendable {
    /// Names one enqueued command in its completion.
    public struct Token: Hashable, Sendable, Comparable, CustomStringConvertible {
        public let rawValue: UInt64
        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
        public var description: String { "#\(rawValue)" }
    }

    public enum Action: Hashable, Sendable {
        /// Write this H4 command packet to the controller.
        case send([UInt8])
        /// The command ended: answered, refused, timed out or cancelled.
        case complete(Token, HCIOpcode, HCICommandResult)
    }

    private struct Entry: Sendable {
        var token: Token
        var command: HCICommandPacket
        /// When it was sent (in flight) or began waiting for a command credit (head of queue).
        var since: ContinuousClock.Instant?
    }

    /// How long a command may wait for its Command Complete/Status.
    public let timeout: Duration
    /// At most this many commands outstanding, even if the controller offers more credits.
    public let maximumInFlight: Int
    /// Commands the controller accepts now (its last `ncmd`, minus what was sent since).
    public private(set) var credits = 1
    /// Completions that matched no outstanding command (late, or for someone else's command).
    public private(set) var unmatchedCompletions = 0

    private var waiting: [Entry] = []
    private var inFlight: [Entry] = []
    private var nextToken: UInt64 = 1

    public init(timeout: Duration = .seconds(3), maximumInFlight: Int = 1) {
        self.timeout = timeout
        self.maximumInFlight = max(1, maximumInFlight)
    }

    public var waitingCount: Int { waiting.count }
    public var inFlightCount: Int { inFlight.count }
    public var isIdle: Bool { waiting.isEmpty && inFlight.isEmpty }
    /// Opcodes sent and not yet answered, oldest first.
    public var inFlightOpcodes: [HCIOpcode] { inFlight.map(\.command.opcode) }

    /// When ``tick(now:into:)`` must run next to notice a timeout, if anything is pending.
    public var nextDeadline: ContinuousClock.Instant? {
        var deadline = inFlight.compactMap(\.since).min()
        if let head = waiting.first?.since { deadline = min(deadline ?? head, head) }
        return deadline.map { $0 + timeout }
    }

    /// Queues a command; sends it at once if the controller has room.
    @discardableResult
    public mutating func enqueue(_ command: HCICommandPacket, now: ContinuousClock.Instant, into actions: inout [Action]) -> Token {
        let token = Token(rawValue: nextToken)
        nextToken += 1
        waiting.append(Entry(token: token, command: command, since: nil))
        pump(now: now, into: &actions)
        return token
    }

    /// Feeds an event. Returns true for Command Complete/Status (whether or not it matched).
    @discardableResult
    public mutating func handle(_ event: HCIEvent, now: ContinuousClock.Instant, into actions: inout [Action]) -> Bool {
        let ncmd: UInt8, opcode: HCIOpcode, result: HCICommandResult
        switch event {
        case .commandComplete(let cc):
            (ncmd, opcode, result) = (cc.numberOfCommands, cc.opcode, cc.result)
        case .commandStatus(let cs):
            (ncmd, opcode, result) = (cs.numberOfCommands, cs.opcode, .status(cs.status))
        default:
            return false
        }
        credits = Int(ncmd)
        if opcode != .noOperation {
            if let index = inFlight.firstIndex(where: { $0.command.opcode == opcode }) {
                let entry = inFlight.remove(at: index)
                actions.append(.complete(entry.token, opcode, result))
            } else {
                unmatchedCompletions += 1
            }
        }
        pump(now: now, into: &actions)
        return true
    }

    /// Ends commands that waited longer than ``timeout`` with ``HCICommandResult/timedOut``.
    /// A timed-out command frees its slot and the controller is given one credit, so a queue
    /// whose owner does not reset keeps going.
    public mutating func tick(now: ContinuousClock.Instant, into actions: inout [Action]) {
        var expired = false
        inFlight.removeAll { entry in
            guard let since = entry.since, now - since >= timeout else { return false }
            actions.append(.complete(entry.token, entry.command.opcode, .timedOut))
            expired = true
            return true
        }
        if let head = waiting.first, let since = head.since, now - since >= timeout {
            waiting.removeFirst()
            actions.append(.complete(head.token, head.command.opcode, .timedOut))
            expired = true
        }
        if expired {
            credits = max(credits, 1)
            pump(now: now, into: &actions)
        }
    }

    /// Ends every command with ``HCICommandResult/cancelled`` and starts afresh with one
    /// credit: for a controller that is being reset or reopened.
    public mutating func cancelAll(into actions: inout [Action]) {
        for entry in inFlight + waiting { actions.append(.complete(entry.token, entry.command.opcode, .cancelled)) }
        inFlight.removeAll()
        waiting.removeAll()
        credits = 1
    }

    private mutating func pump(now: ContinuousClock.Instant, into actions: inout [Action]) {
        while !waiting.isEmpty, credits > 0, inFlight.count < maximumInFlight {
            var entry = waiting.removeFirst()
            entry.since = now
            credits -= 1
            inFlight.append(entry)
            actions.append(.send(entry.command.packet))
        }
        // The head waits for a credit the controller has not given: time that wait too.
        if credits == 0, inFlight.isEmpty, !waiting.isEmpty, waiting[0].since == nil { waiting[0].since = now }
    }
}
