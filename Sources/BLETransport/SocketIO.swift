import CBlueZ
import Glibc
import Synchronization

/// `EBUSY: Device or resource busy`, for messages that an installer may search the web for.
func errnoName(_ code: Int32) -> String {
    let names: [Int32: String] = [
        EPERM: "EPERM", EACCES: "EACCES", EBUSY: "EBUSY", EUSERS: "EUSERS", EALREADY: "EALREADY",
        ENODEV: "ENODEV", ENOENT: "ENOENT", ECONNREFUSED: "ECONNREFUSED", EAFNOSUPPORT: "EAFNOSUPPORT",
        ENETDOWN: "ENETDOWN", EPIPE: "EPIPE", ECONNRESET: "ECONNRESET", ENAMETOOLONG: "ENAMETOOLONG",
        EINVAL: "EINVAL", EIO: "EIO", ENOSPC: "ENOSPC", EROFS: "EROFS", EBADFD: "EBADFD",
    ]
    let text = String(cString: strerror(code))
    if let name = names[code] { return "\(name): \(text)" }
    return "errno \(code): \(text)"
}

/// A connected socket plus an eventfd to interrupt waits on it. Shared by the transports: it waits
/// with poll(2) on the calling thread (the transport owner's), never on the cooperative pool.
final class PollableSocket: Sendable {
    enum Readiness { case readable, woken, timedOut }

    let fd: Int32
    private let wakeFD: Int32
    private let isClosed = Atomic<Bool>(false)

    /// Takes ownership of `fd`.
    init(fd: Int32) throws(HCITransportError) {
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            let e = errno
            Glibc.close(fd)
            throw .system(operation: "eventfd", errno: e)
        }
        self.fd = fd
        self.wakeFD = wake
    }

    var closed: Bool { isClosed.load(ordering: .acquiring) }

    /// Waits for input on the socket, a ``wake()``, or the timeout.
    func wait(timeout: Duration?) throws(HCITransportError) -> Readiness {
        guard !closed else { throw .closed }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds = timeout.map(Self.milliseconds) ?? -1
        while true {
            let n = poll(&fds, 2, milliseconds)
            if n < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "poll", errno: errno)
            }
            if n == 0 { return .timedOut }
            break
        }
        if fds[1].revents != 0 {
            var counter: UInt64 = 0
            _ = Glibc.read(wakeFD, &counter, 8)
        }
        // Hang-up and errors count as readable: the read that follows reports them.
        if fds[0].revents != 0 { return .readable }
        return .woken
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// One read(2) into `buffer`; returns the byte count (0 = end of stream).
    func read(into buffer: inout [UInt8]) throws(HCITransportError) -> Int {
        guard !closed else { throw .closed }
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw .system(operation: "read", errno: errno)
        }
    }

    /// Writes all of `bytes` (MSG_NOSIGNAL: a vanished peer is an error, not a SIGPIPE).
    func sendAll(_ bytes: [UInt8]) throws(HCITransportError) {
        guard !closed else { throw .closed }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "send", errno: errno)
            }
            offset += n
        }
    }

    /// Closes the socket. The eventfd stays open until deinit, so a concurrent ``wake()`` never
    /// writes to a recycled descriptor number.
    func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake()
        Glibc.close(fd)
    }

    deinit {
        close()
        Glibc.close(wakeFD)
    }

    static func milliseconds(_ d: Duration) -> Int32 {
        let (seconds, attoseconds) = d.components
        if seconds < 0 { return 0 }
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: ms)
    }
}
