/// Which way a packet travelled between host and controller (for captures and logs).
public enum H4Direction: Sendable, Hashable {
    /// Host to controller: commands and outgoing ACL data.
    case sent
    /// Controller to host: events and incoming ACL data.
    case received
}
