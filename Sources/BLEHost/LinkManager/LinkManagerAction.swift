extension LinkManager {
    /// What the owner must do or may want to know, in order.
    public enum Action: Hashable, Sendable {
        /// Write this H4 command packet to the controller.
        case send([UInt8])
        /// The init sequence finished: the controller is ready.
        case ready(ControllerInfo)
        /// The init sequence failed; ``LinkManager/start(now:into:)`` may be tried again later.
        case initializationFailed(ControllerInitializer.Failure)
        /// Reset and reopen the controller, then call ``LinkManager/start(now:into:)``. Links
        /// were closed and commands cancelled already.
        case resetController(ResetReason)
        /// Advertising reports to classify.
        case advertisingReports(LEAdvertisingReports)
        case connectionOpened(LELink)
        /// A peer connected to our advertising while every link was taken (the controller
        /// accepted it before advertising stopped taking connections): it is being disconnected
        /// with 0x14 and is never reported opened or closed. For logs and counters.
        case connectionRefused(LELink)
        /// A connection attempt ended without a link: `status` 0x08 at its deadline (queued, or
        /// cancelled while running), 0x09 refused at the connection cap, 0x3E failed to
        /// establish, 0x16 the controller was reset, or the controller's refusal.
        case connectionFailed(peer: BluetoothAddress, addressType: AddressType, status: HCIStatus)
        /// `reason` from Disconnection Complete, or 0x16 when the controller was reset.
        case connectionClosed(LELink, reason: HCIStatus)
        /// New connection parameters are in force on this link.
        case connectionUpdated(LELink)
        /// The result of a command sent with ``LinkManager/send(_:now:into:)``.
        case commandResult(HCICommandQueue.Token, HCIOpcode, HCICommandResult)
        /// One of the link manager's own commands failed (for logs); it retries if that makes sense.
        case commandFailed(HCIOpcode, HCIStatus)
    }
}
