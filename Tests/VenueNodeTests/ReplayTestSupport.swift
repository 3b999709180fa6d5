import Foundation
import VenueDiary

/// What the replay tests share: a scratch directory for real diary files, settings and rows.
final class ReplayDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("venue-replay-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

enum Replayed {
    /// 2026-11-20 18:00 UTC, the evening the files describe.
    static let t0 = 1_795_197_600.0
    /// The wall clock of a replay run soon after the evening.
    static let soonAfter = t0 + 86_400

    /// Herald's defaults with a short maximum visit unless a test says otherwise.
    static func settings(
        checkIn: Double = 120, checkOut: Double = 300, minRSSI: Int? = nil, maxVisit: Double = 12 * 3600, recordingDays: Int? = 31
    ) -> DiarySettings {
        DiarySettings(
            checkInSeconds: checkIn, checkOutSeconds: checkOut, minRSSI: minRSSI, maxVisitSeconds: maxVisit,
            recordingDays: recordingDays)
    }

    /// A phone that stays 10 minutes, one that walks past, one that steps out for 10 minutes.
    static var evening: String {
        var rows = ["time,kind,payload,rssi"]
        for t in stride(from: 0, through: 600, by: 10) { rows.append("\(Int(t0) + t),herald,aa01,-60") }
        for t in stride(from: 30, through: 80, by: 10) { rows.append("\(Int(t0) + t),herald,bb02,-85") }
        for t in stride(from: 0, through: 1800, by: 15) where !(600...1200).contains(t) {
            rows.append("\(Int(t0) + t),gaen,cc030000000000000000000000000000,-70")
        }
        return rows.joined(separator: "\n") + "\n"
    }

    /// A 129-byte Herald test payload (0x00 routing, Int32 id LE at bytes 3–6, zero padding).
    static func heraldPayload(_ id: UInt32) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: 129)
        withUnsafeBytes(of: id.littleEndian) { payload.replaceSubrange(3..<7, with: $0) }
        return payload
    }

    /// A closed visit of `payload` at `checkOut`, ten minutes long.
    static func visit(_ payload: [UInt8], checkOut: Double) -> Visit {
        Visit(kind: .herald, payload: payload, checkIn: checkOut - 600, lastSeen: checkOut, checkOut: checkOut, samples: 60, rssiMax: -50, rssiSum: -3600)
    }
}
