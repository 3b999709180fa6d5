import Foundation
import Glibc
import Testing
@testable import Appliance

/// A datagram socket the test binds, standing in for systemd's notify socket.
final class NotifySocket {
    let fd: Int32
    let name: String

    /// `name` starting with "@" binds in the abstract namespace, else a path.
    init(_ name: String) throws {
        self.name = name
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(name.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { b in for (i, c) in path.enumerated() { b[i] = c } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw SystemdNotifier.Failure(operation: "bind \(name)", code: errno) }
        // Never hang a test: a missing datagram shows up as nil after 5 s.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n < 0 ? nil : String(decoding: buffer[0..<n], as: UTF8.self)
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }
}

@Suite struct SystemdNotifierTests {
    @Test func readyStatusWatchdogAndStoppingOverAPathSocket() throws {
        let dir = TemporaryDirectory("notify")
        let socket = try NotifySocket(dir.file("notify.sock"))
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.name]))
        try notifier.ready(status: "advertising and scanning")
        #expect(socket.receive() == "READY=1\nSTATUS=advertising and scanning")
        try notifier.watchdog()
        #expect(socket.receive() == "WATCHDOG=1")
        try notifier.status("3 visitors\nnow")
        #expect(socket.receive() == "STATUS=3 visitors now")
        try notifier.stopping()
        #expect(socket.receive() == "STOPPING=1")
    }

    /// systemd not reading: the queue fills and sends fail at once (dropped, reported), never block.
    @Test func aFullNotifySocketDropsInsteadOfBlocking() throws {
        let dir = TemporaryDirectory("notify")
        let socket = try NotifySocket(dir.file("notify.sock"))
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.name]))
        var failures = 0
        for _ in 0..<500 {
            do { try notifier.watchdog() } catch { failures += 1 }
        }
        #expect(failures > 0)
        #expect(socket.receive() == "WATCHDOG=1")
    }

    @Test func abstractNamespaceSocket() throws {
        let name = "@venue-beacon-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let socket = try NotifySocket(name)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": name]))
        try notifier.watchdog()
        #expect(socket.receive() == "WATCHDOG=1")
    }

    @Test func noSocketMeansNoNotifierAndAMissingSocketIsAnError() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative"]) == nil)
        let gone = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"])
        #expect(throws: SystemdNotifier.Failure.self) { try gone?.ready() }
    }

    @Test func watchdogIntervalIsHalfTheTimeoutForThisProcess() {
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000"], pid: 42) == .seconds(15))
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"], pid: 42) == .seconds(15))
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "7"], pid: 42) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: [:], pid: 42) == nil)
        #expect(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "0"], pid: 42) == nil)
    }
}

@Suite struct ClockSyncTests {
    @Test func timesyncFlagFileMeansSynchronised() {
        let detector = ClockSyncDetector(fileExists: { $0 == "/run/systemd/timesync/synchronized" }, timedatectl: { nil })
        #expect(detector.isSynchronized())
    }

    @Test func otherwiseTimedatectlDecides() {
        #expect(ClockSyncDetector(fileExists: { _ in false }, timedatectl: { "yes\n" }).isSynchronized())
        #expect(!ClockSyncDetector(fileExists: { _ in false }, timedatectl: { "no\n" }).isSynchronized())
        #expect(!ClockSyncDetector(fileExists: { _ in false }, timedatectl: { nil }).isSynchronized())
    }

    /// The real probes run without crashing and agree with the flag file where it exists.
    @Test func systemDetectorRuns() {
        let flag = access(ClockSyncDetector.timesyncFlag, F_OK) == 0
        let synced = ClockSyncDetector.system.isSynchronized()
        if flag { #expect(synced) }
        let answer = ClockSyncDetector.system.timedatectl()?.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(answer == nil || answer == "yes" || answer == "no")
    }

    @Test func bootTimeReadsThisBoot() {
        let now = BootTime.now()
        #expect(now.bootID.count == 36)
        #expect(now.bootID == BootTime.currentBootID)
        #expect(BootTime.now().seconds >= now.seconds)
    }

    /// The unit passes systemd's %b (its sandbox hides /proc/sys); the kernel's file is next; a
    /// process that can read neither gets an id of its own, never one shared with other boots.
    @Test func bootIDComesFromTheUnitThenTheKernelElseThisProcess() {
        let kernel = "0f7c3a1e-5b2d-4c6e-9a8b-7d6e5f4a3b2c"
        let file: (String) -> String? = { $0 == BootTime.bootIDFile ? kernel + "\n" : nil }
        #expect(BootTime.bootID(environment: [BootTime.bootIDVariable: "0F7C3A1E5B2D4C6E9A8B7D6E5F4A3B2C"], readFile: { _ in nil }) == kernel)
        #expect(BootTime.bootID(environment: [:], readFile: file) == kernel)
        #expect(BootTime.bootID(environment: [BootTime.bootIDVariable: "%b"], readFile: file) == kernel)
        let alone = BootTime.bootID(environment: [BootTime.bootIDVariable: ""], readFile: { _ in "unknown" })
        #expect(alone.hasPrefix(BootTime.processBootIDPrefix))
        #expect(alone != BootTime.bootID(environment: [:], readFile: { _ in nil }))
    }
}

/// Children (sendmail, timedatectl) never inherit what systemd gave the service alone.
@Suite struct ChildEnvironmentTests {
    @Test func childrenDoNotSeeTheNotifySocket() throws {
        setenv("NOTIFY_SOCKET", "/run/test-notify", 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(!ChildProcess.childEnvironment().contains { $0.hasPrefix("NOTIFY_SOCKET=") })
        #expect(ChildProcess.childEnvironment().contains { $0.hasPrefix("PATH=") })
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(null) }
        let (exit, output) = try ChildProcess.run("/usr/bin/env", [], stdin: null, captureStdout: true, timeout: 10)
        #expect(exit == .status(0))
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("PATH=") && !text.contains("NOTIFY_SOCKET"))
    }
}
