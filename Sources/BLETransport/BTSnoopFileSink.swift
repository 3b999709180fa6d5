import BLEHost
import Glibc
import Synchronization

/// Writes every packet it is given to a btsnoop file (datalink 1002, H4), the format `btmon -r`
/// and Wireshark open. Each record goes out with one write(2), so a capture cut short by a power
/// cut loses at most its last record. Write failures never disturb the radio: they are counted.
public final class BTSnoopFileSink: Sendable {
    public let path: String
    private let fd: Int32
    private let failures = Mutex(0)

    /// Creates (or truncates) the file and writes the header.
    public init(path: String) throws(HCITransportError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .captureFailed(path: path, errno: errno) }
        self.fd = fd
        self.path = path
        guard Self.writeAll(fd, BTSnoopHeader(datalink: .h4).bytes) else {
            let e = errno
            Glibc.close(fd)
            throw .captureFailed(path: path, errno: e)
        }
    }

    deinit { Glibc.close(fd) }

    /// Records that failed to write (disk full, card removed).
    public var failedWrites: Int { failures.withLock { $0 } }

    public func record(_ packet: H4Packet, direction: H4Direction) {
        let record = BTSnoopRecord(packet: packet, direction: direction, timestamp: Self.now())
        // The lock keeps records whole when two threads capture at once.
        failures.withLock { failures in
            if !Self.writeAll(fd, record.bytes) { failures += 1 }
        }
    }

    static func now() -> BTSnoopTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return BTSnoopTimestamp(unixMicroseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

/// Any transport, with every packet in both directions copied to a btsnoop capture.
public final class CapturingTransport: HCITransport {
    public let base: any HCITransport
    public let sink: BTSnoopFileSink

    public init(base: any HCITransport, sink: BTSnoopFileSink) {
        self.base = base
        self.sink = sink
    }

    public var name: String { base.name }

    public func send(_ packet: H4Packet) throws(HCITransportError) {
        sink.record(packet, direction: .sent)
        try base.send(packet)
    }

    public func receive(timeout: Duration?) throws(HCITransportError) -> [H4Packet] {
        let packets = try base.receive(timeout: timeout)
        for packet in packets { sink.record(packet, direction: .received) }
        return packets
    }

    public func wakeUp() { base.wakeUp() }

    public func close() { base.close() }
}
