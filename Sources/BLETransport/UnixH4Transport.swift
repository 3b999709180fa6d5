import BLEHost
import CBlueZ
import Glibc
import Synchronization

/// H4 over a unix stream socket, as served by BlueZ's controller emulator (`btvirt -s` listens on
/// `/tmp/bt-server-le`). A stream has no packet boundaries, so received bytes are re-framed by
/// their header lengths (``H4Framer``); a framing error ends the transport.
public final class UnixH4Transport: HCITransport {
    public let name: String
    private let socket: PollableSocket
    private let state: Mutex<State>

    private struct State {
        var framer = H4Framer()
        var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)
        /// Framing lost after good packets of the same read were returned: reported next time.
        var failure: H4FramingError?
    }

    /// Connects to `path` (blocking, but only for a local connect).
    public init(path: String) throws(HCITransportError) {
        let fd = cbluez_connect_unix(path)
        guard fd >= 0 else {
            let e = errno
            switch e {
            case ENOENT, ECONNREFUSED, ENOTSOCK: throw .noServer(path: path, errno: e)
            default: throw .system(operation: "connect to \(path)", errno: e)
            }
        }
        self.socket = try PollableSocket(fd: fd)
        self.name = "unix:" + path
        self.state = Mutex(State())
    }

    public func send(_ packet: H4Packet) throws(HCITransportError) {
        do throws(HCITransportError) {
            try socket.sendAll(packet.wireBytes)
        } catch .system(_, let e) where e == EPIPE || e == ECONNRESET {
            throw .closedByPeer(name)
        }
    }

    public func receive(timeout: Duration?) throws(HCITransportError) -> [H4Packet] {
        if let failure = state.withLock({ $0.failure }) { throw .framingLost(failure) }
        guard try socket.wait(timeout: timeout) == .readable else { return [] }
        return try state.withLock { state throws(HCITransportError) -> [H4Packet] in
            let count: Int
            do throws(HCITransportError) {
                count = try socket.read(into: &state.readBuffer)
            } catch .system(_, let e) where e == ECONNRESET {
                throw .closedByPeer(name)
            }
            guard count > 0 else { throw .closedByPeer(name) }
            state.framer.append(state.readBuffer[..<count])
            var packets: [H4Packet] = []
            do throws(H4FramingError) {
                while let packet = try state.framer.next() { packets.append(packet) }
            } catch {
                guard !packets.isEmpty else { throw .framingLost(error) }
                state.failure = error
            }
            return packets
        }
    }

    public func wakeUp() { socket.wake() }

    public func close() { socket.close() }
}
