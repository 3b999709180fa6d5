import Foundation
import Glibc
import Synchronization

/// The `$NOTIFY_SOCKET` of the child, as systemd would hold it: a datagram socket whose messages
/// (`READY=1`, `STATUS=...`) are kept with the instant they arrived.
final class NotifyListener: Sendable {
    struct Message: Sendable {
        var at: ContinuousClock.Instant
        var text: String
    }

    let path: String
    private let fd: Int32
    private let messages = Mutex<[Message]>([])

    init(path: String) throws {
        unlink(path)
        let socketFD = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        fd = socketFD
        guard socketFD >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = try unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw BenchError("bind \(path): errno \(errno)") }
        self.path = path
        Thread.detachNewThread { [self] in receive() }
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let at = ContinuousClock.now
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            messages.withLock { $0.append(Message(at: at, text: text)) }
        }
    }

    /// Forgets what arrived so far (before the next child starts).
    func clear() { messages.withLock { $0.removeAll() } }

    /// When the first message with an assignment `line` (e.g. `READY=1`) arrived, waiting up to
    /// `timeout` for it.
    func wait(for line: String, timeout: Duration) -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = messages.withLock { $0.first { $0.text.split(separator: "\n").contains { $0 == line } }?.at }
            if let found { return found }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return nil
    }

    /// The latest `STATUS=` line.
    var status: String? {
        messages.withLock { list in
            for message in list.reversed() {
                if let line = message.text.split(separator: "\n").first(where: { $0.hasPrefix("STATUS=") }) {
                    return String(line.dropFirst("STATUS=".count))
                }
            }
            return nil
        }
    }
}
