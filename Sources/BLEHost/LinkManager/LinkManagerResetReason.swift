extension LinkManager {
    /// Why the link manager asks its owner to reset and reopen the controller.
    public enum ResetReason: Hashable, Sendable, CustomStringConvertible {
        /// A command (possibly the health probe) got no answer within the command timeout.
        case commandTimeout(HCIOpcode)
        /// The controller reported a Hardware Error event.
        case hardwareError(code: UInt8)

        public var description: String {
            switch self {
            case .commandTimeout(let opcode): return "no answer to \(opcode)"
            case .hardwareError(let code): return "hardware error 0x\(Hex.encode([code]))"
            }
        }
    }
}
