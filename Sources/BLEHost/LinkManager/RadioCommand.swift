extension LinkManager {
    /// What a machine returns when it wants the controller to do something: one command for the
    /// shared ``HCICommandQueue``. `exclusive` commands run one at a time (see
    /// ``RadioSequencer``); LE Create Connection Cancel is the one that does not wait its turn.
    struct RadioCommand: Sendable {
        var step: RadioStep
        var packet: HCICommandPacket
        var exclusive: Bool

        init(_ command: some HCICommand, _ step: RadioStep, exclusive: Bool = true) {
            self.step = step
            self.packet = command.commandPacket
            self.exclusive = exclusive
        }
    }
}
