import Foundation
@testable import VenueDiary

/// A fresh directory for real SQLite files, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("venue-diary-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Herald's defaults with a short maximum visit unless a test says otherwise.
func settings(
    checkIn: Double = 120, checkOut: Double = 300, minRSSI: Int? = nil, maxVisit: Double = 12 * 3600,
    recordingDays: Int? = 31
) -> DiarySettings {
    DiarySettings(
        checkInSeconds: checkIn, checkOutSeconds: checkOut, minRSSI: minRSSI, maxVisitSeconds: maxVisit,
        recordingDays: recordingDays)
}

/// A 129-byte Herald test payload (0x00 routing, Int32 id LE at bytes 3–6, zero padding).
func heraldPayload(_ id: UInt32) -> [UInt8] {
    var payload = [UInt8](repeating: 0, count: 129)
    payload[3] = UInt8(truncatingIfNeeded: id)
    payload[4] = UInt8(truncatingIfNeeded: id >> 8)
    payload[5] = UInt8(truncatingIfNeeded: id >> 16)
    payload[6] = UInt8(truncatingIfNeeded: id >> 24)
    return payload
}

extension Array where Element == VisitChange {
    func events(_ event: VisitChange.Event) -> [Visit] { filter { $0.event == event }.map(\.visit) }
}

func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }
