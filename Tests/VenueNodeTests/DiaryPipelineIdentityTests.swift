import BLEHost
import Foundation
import Herald
import Sightings
import Testing
import VenueDiary
@testable import VenueNode

/// Identities that are not one phone, through the node's one path into the diary: placeholder
/// identifiers are not visits, one identifier on two devices at once is marked.
@Suite final class DiaryPipelineIdentityTests {
    let directory: URL
    let offset = 1_700_000_000.0

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("venue-node-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func pipeline() throws -> (DiaryPipeline, DiaryStore) {
        let store = try DiaryStore(path: directory.appendingPathComponent("diary.sqlite").path)
        let settings = DiarySettings(checkInSeconds: 120, checkOutSeconds: 300, recordingDays: 31)
        let everyTick = FlushPolicy(interval: 0, maxPendingChanges: 10_000, checkInsWithin: 0)
        return (DiaryPipeline(diary: try VenueDiary(store: store, settings: settings, now: offset, policy: everyTick)), store)
    }

    static func target(_ id: UInt64) -> Target {
        Target(id: TargetID(rawValue: id), address: BluetoothAddress(rawValue: 0xC0_0000_0000 + id), addressType: .random)
    }

    /// A Herald simple payload (0x10, UK, state 4) with the given contact identifier.
    static func simple(_ identifier: [UInt8]) -> SensorPayload {
        SensorPayload(kind: .herald, bytes: [0x10, 0x3A, 0x03, 0x04, 0x00] + identifier)
    }

    /// Herald phones past day 2000 all send 16 zero bytes: ten of them, read and measured for
    /// ten minutes, make no visit (not one merged visit), and are counted as present.
    @Test func tenPhonesWithTheZeroContactIdentifierMakeNoVisit() throws {
        var (p, store) = try pipeline()
        let placeholder = Self.simple([UInt8](repeating: 0, count: 16))
        let phones = (1...10).map { Self.target($0) }
        for phone in phones { p.handle(.read(phone, payload: placeholder, earlier: [], time: 0), wallOffset: offset) }
        var changes: [VisitChange] = []
        for t in stride(from: 1.0, through: 600, by: 1) {
            p.handle(.measure(phones[Int(t) % 10], rssi: -60, payload: placeholder, time: t), wallOffset: offset)
            changes += try p.tick(now: t + offset)
        }
        #expect(changes.isEmpty)
        #expect(try store.visits().isEmpty)
        #expect(p.counters.placeholderSightings == 610)
        #expect(p.placeholderDevicesPresent == 10)
        #expect(p.diary.tracker.trackedIdentities == 0)

        // Gone for longer than the check-out limit: no longer present.
        for t in stride(from: 601.0, through: 1000, by: 1) { _ = try p.tick(now: t + offset) }
        #expect(p.placeholderDevicesPresent == 0)
    }

    /// Beside them, a phone with a real identifier is recorded as ever.
    @Test func aRealPhoneBesidePlaceholdersIsRecorded() throws {
        var (p, store) = try pipeline()
        let placeholder = Self.simple([UInt8](repeating: 0, count: 16))
        let real = Self.simple((1...16).map { UInt8($0) })
        for t in stride(from: 0.0, through: 300, by: 10) {
            p.handle(.measure(Self.target(1), rssi: -60, payload: placeholder, time: t), wallOffset: offset)
            p.handle(.measure(Self.target(2), rssi: -60, payload: real, time: t), wallOffset: offset)
            _ = try p.tick(now: t + offset)
        }
        let visits = try store.visits()
        #expect(visits.map(\.payload) == [real.bytes])
        #expect(visits.first?.sharedIdentity == false)
    }

    /// One identifier carried by two devices at once (their sightings alternate): one visit,
    /// marked shared in the diary, not two visits and not silently one.
    @Test func oneIdentifierOnTwoDevicesIsMarked() throws {
        var (p, store) = try pipeline()
        let cloned = Self.simple((1...16).map { UInt8(0xA0 + $0) })
        let devices = [Self.target(1), Self.target(2)]
        for device in devices { p.handle(.read(device, payload: cloned, earlier: [], time: 0), wallOffset: offset) }
        for t in stride(from: 1.0, through: 300, by: 2) {
            p.handle(.measure(devices[Int(t) / 2 % 2], rssi: -60, payload: cloned, time: t), wallOffset: offset)
            _ = try p.tick(now: t + offset)
        }
        let visits = try store.visits()
        #expect(visits.count == 1)
        #expect(visits.first?.sharedIdentity == true)
        #expect(p.diary.tracker.counters.sharedIdentities == 1)
    }

    /// A phone whose address rotates (a new target, the same payload) is not marked.
    @Test func aRotatingAddressIsNotMarked() throws {
        var (p, store) = try pipeline()
        let phone = Self.simple((1...16).map { UInt8(0x30 + $0) })
        for (index, start) in stride(from: 0.0, through: 2700, by: 900).enumerated() {
            let target = Self.target(UInt64(10 + index))
            p.handle(.read(target, payload: phone, earlier: [], time: start), wallOffset: offset)
            for t in stride(from: start + 1, through: start + 899, by: 2) {
                p.handle(.measure(target, rssi: -60, payload: phone, time: t), wallOffset: offset)
                _ = try p.tick(now: t + offset)
            }
            p.handle(.delete(target, time: start + 899), wallOffset: offset)
        }
        let visits = try store.visits()
        #expect(visits.count == 1)
        #expect(visits.first?.sharedIdentity == false)
    }
}
