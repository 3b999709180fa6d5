import CBlueZ
import Glibc

/// Lets the host's thread sleep (between reopen attempts) until a deadline or until another
/// thread has work for it. An eventfd and poll(2): no cooperative-pool thread is involved.
final class ThreadWaker: Sendable {
    private let fd: Int32

    init() {
        fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
    }

    deinit { if fd >= 0 { close(fd) } }

    func wake() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Sleeps up to `timeout`; returns early (and clears the signal) if ``wake()`` was called.
    func sleep(_ timeout: Duration) {
        guard fd >= 0 else {
            usleep(UInt32(clamping: PollableSocket.milliseconds(timeout) * 1000))
            return
        }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = deadline - ContinuousClock.now
            let n = poll(&p, 1, left > .zero ? PollableSocket.milliseconds(left) : 0)
            if n < 0 && errno == EINTR { continue }
            break
        }
        var counter: UInt64 = 0
        _ = read(fd, &counter, 8)
    }
}
