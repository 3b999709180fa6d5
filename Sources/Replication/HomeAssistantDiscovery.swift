/// `[replication] home_assistant = true`: a node's occupancy and health for Home Assistant,
/// through its MQTT discovery. Counts only, never an identity.
///
/// Three sensors per node, each announced retained at
/// `homeassistant/sensor/<node>/<object>/config` (the node_id level is the node's login, which
/// the venue's ACL requires): phones present now, phones checked in today, and visits waiting
/// for the hub. Their values come together, retained, in one JSON state at
/// `venue-beacon/node/<node>/ha/state`; their availability is the node's status topic, whose
/// last will says offline when the node goes away however it goes.
public enum HomeAssistantDiscovery {
    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
    }

    public static func stateTopic(_ node: String) -> String { "\(ReplicationTopic.root)/node/\(node)/ha/state" }

    static let sensors: [(object: String, name: String, field: String, unit: String, icon: String)] = [
        ("present", "Phones present", "present", "phones", "mdi:account-group"),
        ("checked_in_today", "Checked in today", "checked_in_today", "visits", "mdi:login"),
        ("hub_backlog", "Visits waiting for the hub", "backlog", "visits", "mdi:upload-network"),
    ]

    /// The retained discovery messages for `node` of the venue (`venueCode`, `venueName`).
    public static func configs(node: String, venueCode: UInt32, venueName: String) -> [Message] {
        let device = "venue_beacon_\(venueCode)_\(node.replacingOccurrences(of: "-", with: "_"))"
        return sensors.map { sensor in
            let fields = [
                "\"name\": \(json(sensor.name))",
                "\"unique_id\": \(json("\(device)_\(sensor.object)"))",
                "\"object_id\": \(json("\(device)_\(sensor.object)"))",
                "\"state_topic\": \(json(stateTopic(node)))",
                "\"value_template\": \(json("{{ value_json.\(sensor.field) }}"))",
                "\"unit_of_measurement\": \(json(sensor.unit))",
                "\"state_class\": \"measurement\"",
                "\"icon\": \(json(sensor.icon))",
                "\"availability_topic\": \(json(ReplicationTopic.status(node)))",
                "\"availability_template\": \(json("{{ 'online' if value_json.online else 'offline' }}"))",
                "\"device\": {\"identifiers\": [\(json(device))], \"name\": \(json("\(venueName) \(node)")), \"manufacturer\": \"venue-beacon\", \"model\": \"venue node\"}",
            ]
            return Message(
                topic: "homeassistant/sensor/\(node)/\(sensor.object)/config", payload: Array(("{" + fields.joined(separator: ", ") + "}").utf8))
        }
    }

    /// The sensors' values, one retained JSON document.
    public static func state(node: String, present: Int, checkedInToday: Int, backlog: Int) -> Message {
        Message(
            topic: stateTopic(node),
            payload: Array("{\"present\": \(present), \"checked_in_today\": \(checkedInToday), \"backlog\": \(backlog)}".utf8))
    }

    /// A JSON string literal.
    static func json(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
