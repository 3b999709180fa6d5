/// What kind of identity a sighting carries: the one enum Herald's node reports payloads with
/// (`SensorPayload.kind`) and the diary stores them under. Stored in the diary and the exports as
/// its raw value.
public enum PayloadKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A Herald payload read over GATT or written to the signal characteristic.
    case herald
    /// An Exposure Notification rolling proximity identifier (service data 0xFD6F).
    case gaen
    /// An OpenTrace payload.
    case opentrace
    /// A payload taken from a configured advert-based protocol's service data.
    case advert
}
