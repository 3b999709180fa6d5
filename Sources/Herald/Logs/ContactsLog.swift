/// `contacts.csv`, Herald's event log: one row per event, a marker digit in the event's column
/// (detect 1, read 2, measure 3, share 4, visit 5, detectHerald 6, delete 7), the payload's short
/// name (read, share) or the measurement (`RSSI:-56.0`, with `[BLETransmitPower:12.0]` when the
/// advert announced its TX power) in `data`, as herald-for-android's `ContactLog` writes them.
///
/// The `id` column names a target by the address it was first seen at, for as long as the node
/// follows it (Herald for Android keeps its first `TargetIdentifier`, iOS its peripheral UUID):
/// an Android phone whose address rotates stays one id, so Herald's analysis joins its
/// measurements to the payload read from it. The id is released when the target is deleted.
public struct ContactsLog: Sendable {
    public static let header = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data"
    /// Herald's sensor name for Bluetooth LE.
    public static let sensor = "BLE"

    /// The logged id of every target followed, by the node's id.
    private var ids: [TargetID: String] = [:]

    public init() {}

    /// Targets with an id in the log (followed and not yet deleted).
    public var followed: Int { ids.count }

    /// The rows for one event at `wallTime` (Unix seconds); none for events Herald does not log
    /// here, and for measurements the controller could not take.
    public mutating func rows(for event: SensorEvent, wallTime: Double) -> [String] {
        let time = HeraldLogFormat.timestamp(wallTime)
        func row(_ target: Target, _ columns: String, _ data: String = "") -> String {
            "\(time),\(Self.sensor),\(id(of: target)),\(columns)\(HeraldLogFormat.csv(data))"
        }
        switch event {
        case .detect(let target, _):
            return [row(target, "1,,,,,,,")]
        case .read(let target, let payload, _, _):
            // Herald for Android confirms a device as Herald (detectHerald) before each read.
            let read = row(target, ",2,,,,,,", payload.shortName)
            return payload.kind == .herald ? [row(target, ",,,,,6,,"), read] : [read]
        case .measure(let target, let rssi, _, let txPower, _):
            guard let rssi else { return [] }
            return [row(target, ",,3,,,,,", HeraldLogFormat.proximity(rssi: rssi, txPower: txPower))]
        case .share(let target, let payloads, _, _):
            return payloads.map { row(target, ",,,4,,,,", $0.shortName) }
        case .delete(let target, _):
            defer { ids[target.id] = nil }
            return [row(target, ",,,,,,7,")]
        case .bluetoothState:
            return []
        }
    }

    private mutating func id(of target: Target) -> String {
        if let id = ids[target.id] { return id }
        let id = HeraldLogFormat.csv(target.address.description)
        ids[target.id] = id
        return id
    }
}
