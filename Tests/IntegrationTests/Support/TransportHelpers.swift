import BLEHost
import BLETransport
import Synchronization

/// Phase-1 helpers that drive a transport with raw HCI bytes from a test. Every blocking call runs
/// on a thread of its own (``DedicatedThread``), never on the cooperative pool.
final class TestTransport: Sendable {
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    let transport: any HCITransport
    /// Packets received after the one a previous ``receive`` was waiting for.
    private let backlog = Mutex<[H4Packet]>([])

    init(transport: any HCITransport) { self.transport = transport }

    static func open(_ spec: String, capture: String? = nil) async throws -> TestTransport {
        let spec = try HCITransportSpec(spec)
        let transport = try await DedicatedThread.run(name: "test-open") { () throws(HCITransportError) in
            try spec.open(capturePath: capture)
        }
        return TestTransport(transport: transport)
    }

    func close() { transport.close() }

    func send(_ packet: H4Packet) async throws {
        let transport = self.transport
        try await DedicatedThread.run(name: "test-send") { () throws(HCITransportError) in try transport.send(packet) }
    }

    /// Receives until `done` holds for a packet; returns every packet received, that one last.
    func receive(
        timeout: Duration = .seconds(5), until done: @escaping @Sendable (H4Packet) -> Bool
    ) async throws -> [H4Packet] {
        let transport = self.transport
        let earlier = backlog.withLock { b in defer { b = [] } ; return b }
        let (packets, rest) = try await DedicatedThread.run(name: "test-receive") {
            () throws(HCITransportError) -> ([H4Packet], [H4Packet]) in
            let deadline = ContinuousClock.now + timeout
            var seen: [H4Packet] = []
            var incoming = earlier
            while true {
                for (k, packet) in incoming.enumerated() {
                    seen.append(packet)
                    if done(packet) { return (seen, Array(incoming[(k + 1)...])) }
                }
                guard ContinuousClock.now < deadline else { return (seen, []) }
                incoming = try transport.receive(timeout: deadline - ContinuousClock.now)
            }
        }
        backlog.withLock { $0 = rest + $0 }
        guard let last = packets.last, done(last) else {
            throw Timeout(description: "\(transport.name): no matching packet within \(timeout); got \(packets)")
        }
        return packets
    }

    /// Sends a command and returns the return parameters of its Command Complete (status first).
    @discardableResult
    func command(_ opcode: UInt16, _ parameters: [UInt8] = []) async throws -> [UInt8] {
        var body: [UInt8] = []
        body.appendLE16(opcode)
        body.append(UInt8(parameters.count))
        body += parameters
        try await send(H4Packet(type: .command, body: body))
        let packets = try await receive { Self.commandComplete($0, opcode: opcode) != nil }
        return packets.last.flatMap { Self.commandComplete($0, opcode: opcode) } ?? []
    }

    /// The return parameters if `packet` is the Command Complete event of `opcode`.
    static func commandComplete(_ packet: H4Packet, opcode: UInt16) -> [UInt8]? {
        let b = packet.body
        guard packet.type == .event, b.count >= 5, b[0] == 0x0E,
            UInt16(b[3]) | UInt16(b[4]) << 8 == opcode
        else { return nil }
        return Array(b[5...])
    }
}
