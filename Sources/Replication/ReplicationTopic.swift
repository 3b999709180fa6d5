/// The MQTT topics of a venue (fixed: the broker's ACL, config/mosquitto/venue-beacon.acl, and
/// the docs rely on them). A node's name fills one whole topic level, which is what lets the
/// broker's `%u` patterns hold each login to its own topics.
public enum ReplicationTopic {
    public static let root = "venue-beacon"

    /// A node's visit batches (node → hub, QoS 1, never retained).
    public static func visits(_ node: String) -> String { "\(root)/node/\(node)/visits" }
    /// A node's status, counts only (node → hub, retained; the node's last will says offline).
    public static func status(_ node: String) -> String { "\(root)/node/\(node)/status" }
    /// The hub's acknowledgement to a node (hub → node, retained).
    public static func ack(_ node: String) -> String { "\(root)/ack/\(node)" }

    /// What the hub subscribes to.
    public static let allVisits = "\(root)/node/+/visits"
    public static let allStatus = "\(root)/node/+/status"

    /// What a node topic says: its node name and its last level (`visits`, `status`); nil for
    /// anything else.
    public static func parse(_ topic: String) -> (node: String, kind: String)? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4, levels[0] == root, levels[1] == "node", !levels[2].isEmpty else { return nil }
        return (String(levels[2]), String(levels[3]))
    }
}
