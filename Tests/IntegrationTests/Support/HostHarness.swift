import BLEHost
import BLETransport
import Synchronization

/// One of our hosts running on the emulator, with every event it reports kept for the test.
final class RunningHost: Sendable {
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    let host: BluetoothHost
    let info: ControllerInfo
    private let log = Mutex<[HostEvent]>([])

    init(host: BluetoothHost, info: ControllerInfo) {
        self.host = host
        self.info = info
    }

    var address: BluetoothAddress { info.address }
    var events: [HostEvent] { log.withLock { $0 } }

    func record(_ event: HostEvent) { log.withLock { $0.append(event) } }

    /// Waits for the first event (already seen or still to come) that `match` accepts.
    func waitFor<T>(
        _ what: String, timeout: Duration = .seconds(10), _ match: (HostEvent) -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            for event in events { if let found = match(event) { return found } }
            guard ContinuousClock.now < deadline else {
                throw Timeout(description: "no \(what) within \(timeout); events: \(events.map(\.kind))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The first advertising report from `address`.
    func report(from address: BluetoothAddress, timeout: Duration = .seconds(10)) async throws -> LEAdvertisingReport {
        try await waitFor("advertising report from \(address)", timeout: timeout) { event in
            if case .advertisingReport(let r) = event, r.address == address { return r }
            return nil
        }
    }

    /// Waits until the link manager has advertising enabled (btvirt lets a central connect only
    /// to a current advertiser).
    func advertising(timeout: Duration = .seconds(10)) async throws {
        _ = try await waitFor("advertising enabled", timeout: timeout) { event in
            if case .radio(let state) = event, state.advertising { return true }
            return nil
        }
    }

    /// Forgets the events seen so far (to wait for a new occurrence).
    func clearEvents() { log.withLock { $0 = [] } }
}

extension BTVirt {
    /// Runs one of our hosts per configuration on this emulator, each initialised before `body`
    /// starts, all stopped when it ends.
    func withHosts<T: Sendable>(
        _ configurations: [HostConfiguration], _ body: @Sendable ([RunningHost]) async throws -> T
    ) async throws -> T {
        let spec = try HCITransportSpec(leSpec)
        let hosts = configurations.map {
            BluetoothHost(device: spec, configuration: $0, options: .init(retryOpen: false))
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            var running: [RunningHost] = []
            defer { for h in hosts { h.stop() } }
            for host in hosts {
                group.addTask { try await host.run() }
                let info = try await host.controllerInfo()
                let r = RunningHost(host: host, info: info)
                running.append(r)
                group.addTask { for await event in host.events { r.record(event) } }
            }
            let result = try await body(running)
            for h in hosts { h.stop() }
            try await group.waitForAll()
            return result
        }
    }
}

/// The test database: a 400-byte readable value, a writable characteristic (with and without
/// response) and a notifying one, in one 128-bit service.
enum TestGATT {
    static let service = BluetoothUUID("5a1e0000-7e57-4b1d-9a3c-000000000001")!
    static let long = BluetoothUUID("5a1e0001-7e57-4b1d-9a3c-000000000001")!
    static let writable = BluetoothUUID("5a1e0002-7e57-4b1d-9a3c-000000000001")!
    static let notifying = BluetoothUUID("5a1e0003-7e57-4b1d-9a3c-000000000001")!
    static let longValue: [UInt8] = (0..<400).map { UInt8(truncatingIfNeeded: $0 * 13 + 5) }

    static func database(name: String = "venue-test") throws -> GATTDatabase {
        try GATTDatabase(
            deviceName: name,
            services: [
                GATTServiceDescription(uuid: service, characteristics: [
                    .init(uuid: long, properties: .read, value: .dynamic(initial: longValue)),
                    .init(uuid: writable, properties: [.write, .writeWithoutResponse]),
                    .init(uuid: notifying, properties: [.read, .notify], value: .dynamic(initial: [0])),
                ])
            ])
    }

    /// Flags + complete 128-bit service UUID: 21 bytes.
    static var advertisingData: [UInt8] {
        [0x02, 0x01, 0x06, 0x11, 0x07] + service.littleEndianBytes128
    }

    static func advertising(connectable: Bool = true) throws -> AdvertisingConfiguration {
        AdvertisingConfiguration(
            parameters: LESetAdvertisingParameters(type: connectable ? .connectableUndirected : .nonConnectableUndirected),
            data: try AdvertisingPayload(advertisingData),
            scanResponse: try AdvertisingPayload([0x0B, 0x09] + Array("venue-test".utf8)))
    }
}
