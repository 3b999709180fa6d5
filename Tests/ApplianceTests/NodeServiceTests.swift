import Foundation
import Logging
import Synchronization
import Testing
import VenueDiary
@testable import Appliance

/// `venue-beacon run` (``NodeService``) in this process without a controller: what a Pi whose
/// Bluetooth is missing or broken does. (With a controller it is tested against btvirt in
/// IntegrationTests.)
@Suite struct NodeServiceTests {
    @Test func withoutAControllerTheServiceIsUpRetriesAndSaysWhy() async throws {
        let dir = TemporaryDirectory("service")
        let settings = try Settings.parse(SettingsTests.minimal + """

            [diary]
            path = "\(dir.file("diary.sqlite"))"
            [bluetooth]
            device = "unix:\(dir.file("no-controller-here"))"
            """, file: "t")
        let calls = Mutex<[String]>([])
        func count(_ prefix: String) -> Int { calls.withLock { $0.filter { $0.hasPrefix(prefix) }.count } }
        let hooks = ServiceHooks(
            ready: { calls.withLock { $0.append("ready") } },
            watchdog: { calls.withLock { $0.append("watchdog") } },
            status: { line in calls.withLock { $0.append("status " + line) } },
            radio: { condition in calls.withLock { $0.append("radio \(condition)") } },
            stopping: { calls.withLock { $0.append("stopping") } })
        let (signals, signal) = AsyncStream.makeStream(of: ServiceSignal.self)
        let service = NodeService(settings: settings, hooks: hooks, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: NodeService.Exit.self) { group in
            group.addTask { try await service.run(signals: signals) }
            // Up at the first failure (systemd's start does not time out), and it says why.
            #expect(await eventually { count("ready") == 1 })
            #expect(await eventually { count("radio Bluetooth unavailable") >= 1 })
            #expect(await eventually { count("status Bluetooth unavailable") >= 1 })
            // Retrying with backoff, the loop turns and feeds the watchdog.
            #expect(await eventually { count("watchdog") >= 2 })
            // The diary is open and recording would start with the radio.
            #expect(FileManager.default.fileExists(atPath: settings.diary.path))
            signal.yield(.terminate(SIGTERM))
            let exit = try await group.next()
            #expect(exit == .signal(SIGTERM))
        }
        #expect(count("ready") == 1)
        #expect(count("stopping") == 1)
        #expect(try DiaryStore(path: settings.diary.path, readOnly: true).visits().isEmpty)
    }
}
