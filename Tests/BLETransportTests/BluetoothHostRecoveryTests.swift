import BLEHost
import Glibc
import Synchronization
import Testing
@testable import BLETransport

/// A unix-socket "controller" that accepts connections and never answers: every session's HCI
/// Reset times out, so the host must give up on the session and reopen.
final class SilentController: Sendable {
    let path: String
    private let listener: Int32
    private let accepted = Mutex<[Int32]>([])

    init() throws {
        path = "/tmp/venue-beacon-silent-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 8) == 0)
        DedicatedThread.start(name: "silent-ctrl") { [self] in
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 { break }
                accepted.withLock { $0.append(fd) }
            }
        }
    }

    var connections: Int { accepted.withLock { $0.count } }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for fd in accepted.withLock({ $0 }) { Glibc.close(fd) }
        unlink(path)
    }
}

@Suite struct BluetoothHostRecoveryTests {
    @Test func commandTimeoutEndsTheSessionAndTheHostReopens() async throws {
        let controller = try SilentController()
        defer { controller.close() }
        var configuration = HostConfiguration(database: try GATTDatabase(deviceName: "t", services: []))
        configuration.linkManager = LinkManager.Configuration(commandTimeout: .milliseconds(200))
        let host = BluetoothHost(
            device: try HCITransportSpec("unix:" + controller.path), configuration: configuration,
            options: .init(backoff: ReopenBackoff(initial: .milliseconds(50), maximum: .milliseconds(100))))

        let states = try await withThrowingTaskGroup(of: [BluetoothState].self) { group in
            group.addTask {
                try await host.run()
                return []
            }
            group.addTask {
                var states: [BluetoothState] = []
                for await event in host.events {
                    guard case .state(let state) = event else { continue }
                    states.append(state)
                    if states.filter({ if case .recovering = $0 { true } else { false } }).count == 2 { break }
                }
                return states
            }
            let states = try await group.next() ?? []
            group.cancelAll()
            return states
        }
        #expect(controller.connections >= 2)
        let recovering = states.compactMap { if case .recovering(let why) = $0 { why } else { nil } }
        #expect(recovering.count == 2)
        #expect(recovering.first?.contains("Reset") == true, "\(recovering)")
        #expect(states.first == .opening("unix:" + controller.path))
        // A request after the host stopped fails at once.
        await #expect(throws: HostError.notRunning) { try await host.controllerInfo() }
    }
}
