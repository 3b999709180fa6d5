import Foundation

/// A node's health as it publishes it, retained, to `venue-beacon/node/<node>/status`: counts
/// and flags only, never an identity or a visit. Its last will is the same document with
/// `online` false, so the hub learns when a node goes away however it goes.
///
/// JSON, so `mosquitto_sub` shows it to an installer as it is:
/// `{"online": true, "clock_synchronised": true, "backlog": 0, "present": 3}`.
public struct NodeHealth: Sendable, Equatable {
    public var online: Bool
    /// Whether the node's clock is synchronised; nil when the node does not know (the will).
    public var clockSynchronised: Bool?
    /// Visits the hub has not acknowledged yet.
    public var backlog: Int?
    /// Phones present now (open, checked-in visits).
    public var present: Int?

    public init(online: Bool, clockSynchronised: Bool? = nil, backlog: Int? = nil, present: Int? = nil) {
        self.online = online
        self.clockSynchronised = clockSynchronised
        self.backlog = backlog
        self.present = present
    }

    public static let offline = NodeHealth(online: false)

    public func encoded() -> [UInt8] {
        var fields = ["\"online\": \(online)"]
        if let clockSynchronised { fields.append("\"clock_synchronised\": \(clockSynchronised)") }
        if let backlog { fields.append("\"backlog\": \(backlog)") }
        if let present { fields.append("\"present\": \(present)") }
        return Array(("{" + fields.joined(separator: ", ") + "}").utf8)
    }

    public init(decoding bytes: [UInt8]) throws {
        guard bytes.count <= 4096,
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let online = object["online"] as? Bool
        else { throw WireFormatError("a node status is a JSON object with \"online\": true or false") }
        self.online = online
        clockSynchronised = object["clock_synchronised"] as? Bool
        backlog = (object["backlog"] as? NSNumber)?.intValue
        present = (object["present"] as? NSNumber)?.intValue
    }
}
