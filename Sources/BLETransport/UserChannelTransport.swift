import BLEHost
import CBlueZ
import Glibc
import Synchronization

/// The controller of a local adapter through an HCI user channel: exclusive access to raw HCI,
/// the kernel's own Bluetooth stack (and bluetoothd) detached. One read is one H4 packet.
///
/// Opening powers the adapter down (HCIDEVDOWN), then binds the user channel, retrying EBUSY with a
/// short backoff (bluetoothd may power the adapter up again in between). The controller's state is
/// whatever it was: the host runtime sends HCI Reset first.
public final class UserChannelTransport: HCITransport {
    /// Which adapter to open: by index (`hci0`) or by address, so a renumbered adapter is still found.
    public enum Adapter: Sendable, Hashable, CustomStringConvertible {
        case index(UInt16)
        case address(BluetoothAddress)

        public var description: String {
            switch self {
            case .index(let i): return "hci\(i)"
            case .address(let a): return a.description
            }
        }
    }

    public let name: String
    public let adapter: BluetoothAdapterInfo
    private let socket: PollableSocket
    private let state = Mutex(State())

    private struct State {
        var readBuffer = [UInt8](repeating: 0, count: 8192)
        var droppedPackets = 0
    }

    /// Reads that did not hold exactly one well-formed packet (dropped, not fatal: a datagram
    /// socket cannot lose framing).
    public var droppedPacketCount: Int { state.withLock { $0.droppedPackets } }

    /// Opens the adapter. Blocks for up to about a second while retrying EBUSY: call it from the
    /// thread that will own the transport, not from the cooperative pool.
    public init(adapter wanted: Adapter, bindAttempts: Int = 5) throws(HCITransportError) {
        let control = try HCIControlSocket()
        let adapters = try control.adapters()
        let found: BluetoothAdapterInfo?
        switch wanted {
        case .index(let i): found = adapters.first { $0.index == i }
        case .address(let a): found = adapters.first { $0.address == a }
        }
        guard let adapter = found else { throw .noSuchAdapter(requested: wanted.description, available: adapters) }

        let fd = cbluez_hci_socket()
        guard fd >= 0 else { throw UserChannelStep.openSocket.error(errno: errno, adapter: adapter.name) }
        var attempt = 0
        while true {
            attempt += 1
            do throws(HCITransportError) {
                try control.powerDown(index: adapter.index)
                guard cbluez_bind_user_channel(fd, adapter.index) < 0 else { break }
                throw UserChannelStep.bind.error(errno: errno, adapter: adapter.name)
            } catch .adapterBusy(_, let e) where e == EBUSY && attempt < bindAttempts {
                // Powered up again (bluetoothd) or the previous owner's socket not yet released.
                usleep(UInt32(50_000 << (attempt - 1)))
            } catch {
                Glibc.close(fd)
                throw error
            }
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        self.socket = try PollableSocket(fd: fd)
        self.adapter = adapter
        self.name = adapter.name
    }

    public func send(_ packet: H4Packet) throws(HCITransportError) {
        do throws(HCITransportError) {
            try socket.sendAll(packet.wireBytes)
        } catch .system(_, let e) where e == ENODEV || e == ENETDOWN {
            throw .adapterGone(name)
        }
    }

    public func receive(timeout: Duration?) throws(HCITransportError) -> [H4Packet] {
        guard try socket.wait(timeout: timeout) == .readable else { return [] }
        return try state.withLock { state throws(HCITransportError) -> [H4Packet] in
            var packets: [H4Packet] = []
            // Drain what is queued (bounded, so a flood cannot starve the owner's other work).
            while packets.count < 64 {
                let count: Int
                do throws(HCITransportError) {
                    count = try socket.read(into: &state.readBuffer)
                } catch .system(_, let e) where e == EAGAIN || e == EWOULDBLOCK {
                    break
                } catch .system(_, let e) where e == ENODEV || e == ENETDOWN {
                    throw .adapterGone(name)
                }
                guard count > 0 else { throw .adapterGone(name) }
                do throws(H4FramingError) {
                    packets.append(try H4Packet(datagram: state.readBuffer[..<count]))
                } catch {
                    state.droppedPackets += 1
                }
            }
            return packets
        }
    }

    public func wakeUp() { socket.wake() }

    public func close() { socket.close() }
}
