import AirTransport
import BLEHost
import Foundation
import Glibc
import Simulation
import Synchronization

/// The simulated air served as a controller on a unix stream socket (H4), the way `btvirt -s`
/// serves its emulated controller: `venue-beacon run` connects with `device = "unix:PATH"`.
///
/// No second controller: each connection gets a fresh ``Air`` (the node's virtual controller and
/// the crowd around it) inside a ``SimulatedTransport`` paced at real time, and two threads carry
/// bytes between it and the socket. A connection starts the air's clock at zero, so every run of
/// the node sees the crowd in range from its first scan.
final class AirServer: Sendable {
    let path: String
    private let listener: Int32
    private let truth = Mutex<GroundTruth?>(nil)
    /// The transport of the connection being served, for its counters.
    private let current = Mutex<SimulatedTransport?>(nil)
    /// The advert flood beside the air (see ``flood(perSecond:)``).
    private let flooding = Mutex(Flood())

    init(path: String) throws {
        unlink(path)
        let socketFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        listener = socketFD
        guard socketFD >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = try unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(socketFD, 4) == 0 else { throw BenchError("bind/listen \(path): errno \(errno)") }
        self.path = path
    }

    /// The crowd that the next connection's air holds.
    func serve(_ next: GroundTruth) { truth.withLock { $0 = next } }

    /// What the air of the current connection did (adverts heard and reported, links).
    var counters: AirCounters? { current.withLock { $0?.inspect { $0.counters } } }

    /// From now on, `rate` advertising reports a second besides the air's, each from a new
    /// random address with a new random Exposure Notification identifier (BLE advert spam, as a
    /// Flipper's "BLE spam" sends), paced by the wall clock; 0 stops it. Returns how many the
    /// flood before this call sent.
    @discardableResult
    func flood(perSecond rate: Int, devices: Int = 0) -> Int {
        flooding.withLock { flood in
            let sent = flood.sent
            flood = Flood(rate: rate, devices: devices, started: ContinuousClock.now)
            return sent
        }
    }

    /// Reports the current flood has sent.
    var floodSent: Int { flooding.withLock { $0.sent } }

    /// Accepts connections for the life of the process, one bridge each.
    func start() {
        Thread.detachNewThread { [self] in
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 {
                    if errno == EINTR { continue }
                    return
                }
                guard let truth = truth.withLock({ $0 }) else {
                    close(fd)
                    continue
                }
                let transport = SimulatedTransport(air: Air(truth: truth), endTime: 1e9, pacing: .speedUp(1))
                current.withLock { $0 = transport }
                let socket = ConnectionSocket(fd: fd)
                Thread.detachNewThread { Self.hostToAir(socket, transport: transport) }
                Thread.detachNewThread { self.airToHost(socket, transport: transport) }
            }
        }
    }

    /// Commands and ACL from the host, framed by their headers, into the air. Ends (closing the
    /// transport, which ends the other direction) when the host hangs up.
    private static func hostToAir(_ socket: ConnectionSocket, transport: SimulatedTransport) {
        defer { socket.release() }
        let fd = socket.fd
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            framer.append(buffer[..<count])
            do {
                while let packet = try framer.next() { try transport.send(packet) }
            } catch {
                break loop
            }
        }
        transport.close()
    }

    /// Events and ACL from the air to the host, as the paced air produces them. Waits at most
    /// 2 ms of air time per call, so a command is answered within about 2 ms of wall time.
    private func airToHost(_ socket: ConnectionSocket, transport: SimulatedTransport) {
        defer { socket.release() }
        let fd = socket.fd
        var bytes: [UInt8] = []
        var spam = FloodReports()
        while true {
            let packets: [H4Packet]
            do {
                packets = try transport.receive(timeout: .milliseconds(2))
            } catch {
                return
            }
            let (due, devices) = flooding.withLock { ($0.take(now: ContinuousClock.now), $0.devices) }
            guard !packets.isEmpty || due > 0 else { continue }
            if spam.devices != devices { spam = FloodReports(devices: devices) }
            bytes.removeAll(keepingCapacity: true)
            for packet in packets { bytes += packet.wireBytes }
            for _ in 0..<due { bytes += spam.next().wireBytes }
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else {
                    transport.close()
                    shutdown(fd, Int32(SHUT_RDWR))  // ends the other direction's read
                    return
                }
                sent += n
            }
        }
    }
}

/// A flood's pace: how many reports are due by the wall clock and how many went.
struct Flood {
    var rate = 0
    /// 0: every report from a new device; otherwise this many devices in turn.
    var devices = 0
    var started = ContinuousClock.now
    var sent = 0

    /// Reports due now and not yet sent (counted as sent), at most a second's worth at once.
    mutating func take(now: ContinuousClock.Instant) -> Int {
        guard rate > 0 else { return 0 }
        let elapsed = now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let due = min(Int(seconds * Double(rate)) - sent, rate)
        guard due > 0 else { return 0 }
        sent += due
        return due
    }
}

/// Advertising report events of a flood: each one report, non-connectable, from a new random
/// (resolvable-looking) address, carrying an Exposure Notification advert (flags, 0xFD6F in
/// the service list, its service data: a new random 16-byte identifier and 4 metadata bytes),
/// the layout a phone sends. A seeded generator: the same flood every run.
///
/// With `devices` > 0 the reports come from that many devices in turn instead, each with its own
/// address and identifier for the whole run: a crowd of advert-only phones, every report after
/// the first round from a device the node already follows.
struct FloodReports {
    let devices: Int
    private var random = SplitMix64(state: 0x9E37_79B9_7F4A_7C15)
    private var sent: UInt64 = 0

    init(devices: Int = 0) { self.devices = devices }

    mutating func next() -> H4Packet {
        guard devices > 0 else { return Self.report(&random, rssi: Int8?.none) }
        // Device n: the same generator every round (its address and identifier); its RSSI
        // changes with each report.
        let rssi = Int8(-60 - Int(random.next() % 30))
        var device = SplitMix64(state: (sent % UInt64(devices)) &* 4 &* 0x9E37_79B9_7F4A_7C15)
        sent += 1
        return Self.report(&device, rssi: rssi)
    }

    private static func report(_ random: inout SplitMix64, rssi fixed: Int8?) -> H4Packet {
        let address = BluetoothAddress(rawValue: random.next() & 0x3FFF_FFFF_FFFF | 0x4000_0000_0000)
        var data: [UInt8] = [0x02, 0x01, 0x1A, 0x03, 0x03, 0x6F, 0xFD, 0x17, 0x16, 0x6F, 0xFD]
        for _ in 0..<2 { withUnsafeBytes(of: random.next()) { data += $0 } }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: random.next())) { data += $0 }
        let rssi = fixed ?? Int8(-60 - Int(random.next() % 30))
        let report = LEAdvertisingReport(
            eventType: .nonConnectableUndirected, addressType: .random, address: address, data: data[...], rawRSSI: rssi)
        return LEAdvertisingReports.packet([report])
    }
}

/// A connected socket used by two threads: closed when both are done with it (never while one
/// may still read or write it, so its number cannot be reused under them).
final class ConnectionSocket: Sendable {
    let fd: Int32
    private let users = Atomic<Int>(2)

    init(fd: Int32) { self.fd = fd }

    func release() {
        if users.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { close(fd) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A unix socket address for `path`.
func unixAddress(_ path: String) throws -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else { throw BenchError("socket path too long: \(path)") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return address
}
