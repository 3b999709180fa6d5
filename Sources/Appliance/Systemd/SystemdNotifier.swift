import Foundation
import Glibc

/// Tells systemd how the service is doing (sd_notify(3)): one datagram per message to the
/// AF_UNIX socket named by `$NOTIFY_SOCKET` (a leading `@` means the abstract namespace). No
/// libsystemd: it is one `sendto`.
///
/// `Type=notify` waits for `READY=1`; `WatchdogSec=` restarts the service unless `WATCHDOG=1`
/// arrives at least every `$WATCHDOG_USEC`; `STATUS=` is the line `systemctl status` shows.
public struct SystemdNotifier: Sendable {
    public let socketPath: String

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var operation: String
        public var code: Int32
        public var description: String { "notify \(operation): \(String(cString: strerror(code)))" }
    }

    /// nil when not started by systemd with notify access (no `$NOTIFY_SOCKET`).
    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], path.hasPrefix("/") || path.hasPrefix("@"), path.utf8.count < 108 else {
            return nil
        }
        socketPath = path
    }

    /// How often to send `WATCHDOG=1`: half of `$WATCHDOG_USEC`, as sd_watchdog_enabled(3)
    /// advises; nil when the watchdog is off or meant for another process (`$WATCHDOG_PID`).
    public static func watchdogInterval(
        environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()
    ) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], Int32(owner) != pid { return nil }
        return .microseconds(usec / 2)
    }

    public func ready(status: String? = nil) throws(Failure) { try send(["READY=1"] + (status.map { ["STATUS=" + $0] } ?? [])) }
    public func watchdog() throws(Failure) { try send(["WATCHDOG=1"]) }
    public func status(_ text: String) throws(Failure) { try send(["STATUS=" + text]) }
    public func stopping() throws(Failure) { try send(["STOPPING=1"]) }

    /// Sends `KEY=VALUE` assignments in one datagram. Newlines inside a status are flattened:
    /// a newline separates assignments.
    public func send(_ assignments: [String]) throws(Failure) {
        let message = assignments.map { $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n")
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(operation: "socket", code: errno) }
        defer { close(fd) }

        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }  // abstract: a leading NUL, no terminator
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in path.enumerated() { buffer[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let sent = message.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    // Never blocks: a notify socket whose queue is full (systemd not reading) must
                    // not stall the loop that sends watchdog pings; the message is dropped and
                    // the caller logs the error.
                    sendto(fd, text.baseAddress, text.count - 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), $0, length)
                }
            }
        }
        guard sent >= 0 else { throw Failure(operation: "send to \(socketPath)", code: errno) }
    }
}
