import Foundation
import Synchronization

/// Debian's mosquitto, started by a test on 127.0.0.1 with a temporary config, port,
/// persistence directory and password file, and the venue's real ACL
/// (config/mosquitto/venue-beacon.acl).
final class Mosquitto: Sendable {
    static let executable = "/usr/sbin/mosquitto"
    static let passwd = "/usr/bin/mosquitto_passwd"

    let dir: TemporaryDirectory
    let port: Int
    let config: String
    let passwords: [String: String]
    let process: Mutex<ChildProcess?> = Mutex(nil)

    /// - Parameters:
    ///   - logins: login name → password (the hub's login is `hub`).
    ///   - extra: more broker settings (`max_queued_messages 10`, say).
    init(logins: [String: String], extra: String = "") throws {
        dir = try TemporaryDirectory("mosquitto")
        port = try Self.freePort()
        passwords = logins
        let passwordFile = dir.path("passwd")
        for (index, (login, password)) in logins.sorted(by: { $0.key < $1.key }).enumerated() {
            let result = try ProcessRunner.run(
                URL(fileURLWithPath: Self.passwd), (index == 0 ? ["-c"] : []) + ["-b", passwordFile, login, password])
            guard result.status == 0 else { throw ChildProcess.Failure(description: "mosquitto_passwd: \(result.output)") }
        }
        let acl = ProcessRunner.repositoryRoot.appendingPathComponent("config/mosquitto/venue-beacon.acl").path
        // Started as root, mosquitto drops to the user mosquitto unless told otherwise, and could
        // then not read the test's files.
        let user = geteuid() == 0 ? "user root\n" : ""
        config = try dir.write("mosquitto.conf", """
            \(user)per_listener_settings false
            listener \(port) 127.0.0.1
            allow_anonymous false
            password_file \(passwordFile)
            acl_file \(acl)
            persistence true
            persistence_location \(dir.path("data"))/
            autosave_interval 1800
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            \(extra)
            """)
        try FileManager.default.createDirectory(atPath: dir.path("data"), withIntermediateDirectories: true)
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts the broker and waits until it listens.
    func start() async throws {
        let child = try ChildProcess(Self.executable, ["-c", config])
        process.withLock { $0 = child }
        try await child.waitForOutput("running")
    }

    /// SIGKILL: no goodbye, no save of its persistence.
    func kill9() async throws {
        guard let child = process.withLock({ $0 }) else { return }
        kill(child.processIdentifier, SIGKILL)
        _ = try await child.waitForExit(timeout: .seconds(10))
    }

    func stop() async {
        await process.withLock({ $0 })?.stop()
    }

    var output: String { process.withLock { $0?.output ?? "" } }

    /// A TCP port nobody listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ChildProcess.Failure(description: "no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
