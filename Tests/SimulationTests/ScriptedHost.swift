import BLEHost

@testable import Simulation

/// A minimal host for testing the air on its own: sends commands and ACL to the node's virtual
/// controller and collects what comes back, decoded with the project's HCI decoders.
struct ScriptedHost {
    var air: Air
    /// Events not yet looked at, oldest first, with their virtual time.
    var events: [(time: Double, event: HCIEvent)] = []
    var acl: [(time: Double, packet: ACLPacket)] = []
    var credits: Int

    init(_ air: Air) {
        self.air = air
        credits = Int(air.configuration.aclPacketCount)
    }

    mutating func take(_ packets: [H4Packet]) {
        for packet in packets {
            if packet.type == .event, let event = try? HCIEvent(decoding: packet.body[...]) {
                if case .numberOfCompletedPackets(let n) = event {
                    credits += n.reduce(0) { $0 + Int($1.completedPackets) }
                }
                events.append((air.now, event))
            } else if packet.type == .acl, let p = try? ACLPacket(decoding: packet.body[...]) {
                acl.append((air.now, p))
            }
        }
    }

    /// Sends a command and returns its Command Complete or Command Status (events that come
    /// with it stay in `events`).
    mutating func command(_ command: some HCICommand) -> HCIEvent? {
        air.send(H4Packet(type: .command, body: Array(command.packet.dropFirst())))
        take(air.advance(until: air.now))
        guard let i = events.firstIndex(where: {
            switch $0.event {
            case .commandComplete(let c): return c.opcode == type(of: command).opcode
            case .commandStatus(let c): return c.opcode == type(of: command).opcode
            default: return false
            }
        }) else { return nil }
        return events.remove(at: i).event
    }

    /// The status a command got, from Command Complete or Command Status.
    mutating func status(_ c: some HCICommand) -> HCIStatus? {
        switch command(c) {
        case .commandComplete(let complete)?: return complete.result.status
        case .commandStatus(let status)?: return status.status
        default: return nil
        }
    }

    /// Runs the air until virtual time `time`, collecting everything.
    mutating func run(until time: Double) {
        while air.now < time {
            take(air.advance(until: time))
        }
    }

    /// Runs until an event matching `predicate` arrives (or `limit`), and removes it.
    mutating func wait(until limit: Double, for predicate: (HCIEvent) -> Bool) -> (time: Double, event: HCIEvent)? {
        while true {
            if let i = events.firstIndex(where: { predicate($0.event) }) { return events.remove(at: i) }
            guard air.now < limit else { return nil }
            take(air.advance(until: limit))
        }
    }

    mutating func initialise() {
        _ = command(Reset())
        _ = command(SetEventMask())
        _ = command(LESetEventMask())
        _ = command(WriteLEHostSupported())
    }

    /// Sends one ATT PDU on a link, waiting for buffer credits as a host must.
    mutating func sendATT(_ pdu: [UInt8], handle: UInt16) {
        for fragment in ACLFragmenter.fragment(
            handle: handle, channel: .att, payload: pdu, maximumDataLength: Int(air.configuration.aclDataLength))
        {
            while credits == 0 { take(air.advance(until: air.now + 1)) }
            credits -= 1
            air.send(H4Packet(type: .acl, body: Array(fragment.dropFirst())))
        }
    }

    /// Runs a GATT exchange on `handle` with our `connection` until `done` says so (or `limit`),
    /// answering requests from `database`; returns the connection's actions.
    mutating func gatt(
        _ connection: inout GATTConnection, handle: UInt16, database: GATTDatabase, first: [GATTConnection.Action], until limit: Double,
        done: ([GATTConnection.Action]) -> Bool
    ) -> [GATTConnection.Action] {
        var all = first
        var reassembler = ACLReassembler()
        var pending = first
        while !done(all), air.now < limit {
            for case .send(let pdu) in pending { sendATT(pdu, handle: handle) }
            pending = []
            if acl.isEmpty { take(air.advance(until: limit)) }
            while !acl.isEmpty {
                let (_, packet) = acl.removeFirst()
                if case .frame(let frame) = reassembler.receive(packet), frame.channel == .att {
                    let actions = connection.receive(frame.payload, database: database, now: air.instant(air.now))
                    all += actions
                    pending += actions
                }
            }
        }
        // Answers owed stay owed: send them even when done.
        for case .send(let pdu) in pending { sendATT(pdu, handle: handle) }
        return all
    }
}
