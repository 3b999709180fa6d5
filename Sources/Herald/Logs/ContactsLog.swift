/// `contacts.csv`, Herald's event log: one row per event, a marker digit in the event's column
/// (detect 1, read 2, measure 3, share 4, visit 5, detectHerald 6, delete 7), the payload's short
/// name (read, share) or the RSSI (measure) in `data` (herald-for-android `ContactLog`).
public enum ContactsLog {
    public static let header = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data"
    /// Herald's sensor name for Bluetooth LE.
    public static let sensor = "BLE"

    /// The rows for one event at `wallTime` (Unix seconds); none for events Herald does not log
    /// here, and for measurements the controller could not take.
    public static func rows(for event: SensorEvent, wallTime: Double) -> [String] {
        let time = HeraldLogFormat.timestamp(wallTime)
        func row(_ target: Target, _ columns: String, _ data: String = "") -> String {
            "\(time),\(sensor),\(HeraldLogFormat.csv(target.address.description)),\(columns)\(HeraldLogFormat.csv(data))"
        }
        switch event {
        case .detect(let target, _):
            return [row(target, "1,,,,,,,")]
        case .read(let target, let payload, _, _):
            return [row(target, ",2,,,,,,", payload.shortName)]
        case .measure(let target, let rssi, _, _):
            guard let rssi else { return [] }
            return [row(target, ",,3,,,,,", HeraldLogFormat.rssi(rssi))]
        case .share(let target, let payloads, _, _):
            return payloads.map { row(target, ",,,4,,,,", $0.shortName) }
        case .bluetoothState:
            return []
        }
    }
}
