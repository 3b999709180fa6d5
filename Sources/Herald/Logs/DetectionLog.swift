import Foundation

/// `detection.csv`, one line rewritten whenever a new payload is seen:
/// `deviceName,OS,osVersion,ownShortName,` then the sorted short names of the payloads seen
/// (herald-for-android `DetectionLog`). Herald's analysis counts detected pairs from it. As in
/// Herald, a restart keeps the list: ``restore(from:)`` takes the names of the file written before.
public struct DetectionLog: Sendable {
    public var deviceName: String
    public var operatingSystem: String
    public var operatingSystemVersion: String
    /// The node's own payload (the venue beacon payload).
    public var ownShortName: String
    public private(set) var shortNames: Set<String> = []

    public init(deviceName: String, operatingSystem: String = "Linux", operatingSystemVersion: String, ownPayload: [UInt8]) {
        self.deviceName = deviceName
        self.operatingSystem = operatingSystem
        self.operatingSystemVersion = operatingSystemVersion
        self.ownShortName = heraldShortName(ownPayload)
    }

    /// Notes the payloads of a read or share; true when the line changed.
    public mutating func record(_ event: SensorEvent) -> Bool {
        var changed = false
        switch event {
        case .read(_, let payload, _, _):
            changed = insert(payload.shortName)
        case .share(_, let payloads, _, _):
            for payload in payloads where insert(payload.shortName) { changed = true }
        default:
            break
        }
        return changed
    }

    /// Adds the payloads listed in a `detection.csv` written before (fields after the fourth);
    /// anything unreadable is ignored.
    public mutating func restore(from content: String) {
        guard let line = content.split(whereSeparator: \.isNewline).first else { return }
        for name in HeraldLogFormat.fields(line).dropFirst(4) where !name.isEmpty {
            _ = insert(name.trimmingCharacters(in: .whitespaces))
        }
    }

    private mutating func insert(_ name: String) -> Bool {
        name != ownShortName && shortNames.insert(name).inserted
    }

    /// The file's content.
    public var line: String {
        let fields = [deviceName, operatingSystem, operatingSystemVersion, ownShortName].map(HeraldLogFormat.csv) + shortNames.sorted()
        return fields.joined(separator: ",") + "\n"
    }
}
