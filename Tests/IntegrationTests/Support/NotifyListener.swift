import Foundation
import Glibc

/// A datagram socket standing in for systemd's notify socket: `venue-beacon run` gets its path
/// in `$NOTIFY_SOCKET` and the test reads what it sent.
final class NotifyListener {
    let fd: Int32
    let path: String
    private(set) var messages: [String] = []

    init(_ path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { b in for (i, c) in bytes.enumerated() { b[i] = c } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw ChildProcess.Failure(description: "bind \(path): errno \(errno)") }
    }

    /// Reads datagrams until one has a line starting with `line` (or equal to it with
    /// `prefix: false`), or throws after `timeout`. Returns that line.
    @discardableResult
    func waitFor(_ line: String, prefix: Bool = false, timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                let message = String(decoding: buffer[0..<n], as: UTF8.self)
                messages.append(message)
                if let found = message.split(separator: "\n").first(where: { prefix ? $0.hasPrefix(line) : $0 == line }) {
                    return String(found)
                }
                continue
            }
            guard ContinuousClock.now < deadline else {
                throw ChildProcess.Failure(description: "no \(line) on \(path) within \(timeout); received: \(messages)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Reads every datagram waiting now (kept in ``messages``).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let n = recv(fd, &buffer, buffer.count, 0), n > 0 {
            messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
