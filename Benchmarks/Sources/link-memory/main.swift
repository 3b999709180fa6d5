// link-memory: bytes held per link by the host's per-link state (issue 3): LinkDataPath, which
// keeps per connection handle the link's GATTConnection (ATT bearer, GATT server state, client
// procedures), its ACL flow-control credits and queue, and its entry in the ACL reassembler.
//
// `--links N` (3,800: ACL handles are 12 bits, so one data path holds at most 0xF00 links) links
// are opened in one LinkDataPath, and each is brought to a realistic state through real ACL
// packets: the peer exchanges MTUs (517) and subscribes to a notifying characteristic (CCCD write);
// the controller returns the credits of our responses (Number Of Completed Packets). Then each
// link gets a half-built 200-byte L2CAP frame (a long write in flight). Measured per step: heap
// bytes in use (glibc mallinfo2) and resident set size (/proc/self/statm), as deltas divided by N.
//
// Usage: link-memory [--links N]
import AdvertCorpus
import BLEHost
import Foundation
import Glibc
import HeapStats

func heapInUse() -> Int { Int(heap_bytes_in_use()) }

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

let count = min(option("--links", default: 3_800), 0xF00)
let level = BluetoothUUID(0x2A19 as UInt16)
let database = try GATTDatabase(
    deviceName: "venue", services: [
        GATTServiceDescription(uuid: BluetoothUUID(0xFCF6 as UInt16), characteristics: [
            .init(uuid: BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11")!, properties: [.write, .writeWithoutResponse]),
            .init(uuid: BluetoothUUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")!, properties: .read, value: .dynamic(initial: CorpusDevice.heraldPayload(index: 0))),
        ]),
        GATTServiceDescription(uuid: BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b")!, characteristics: [
            .init(uuid: level, properties: [.read, .notify], value: .dynamic(initial: [100])),
        ]),
    ])
guard let cccd = database.attributes.first(where: { $0.type == BluetoothUUID(0x2902 as UInt16) && $0.handle > 9 })?.handle else {
    print("link-memory: no CCCD in the database")
    exit(1)
}
let now = ContinuousClock.now

/// One ACL packet from the peer carrying `pdu` on the ATT channel, or its first `cut` bytes.
func acl(_ handle: UInt16, att pdu: [UInt8], announcing length: Int? = nil) -> [UInt8] {
    let l2capLength = length ?? pdu.count
    var body: [UInt8] = []
    body.appendLE16(handle | 0b10 << 12)  // first automatically flushable fragment
    body.appendLE16(UInt16(4 + pdu.count))
    body.appendLE16(UInt16(l2capLength))
    body.appendLE16(0x0004)
    body += pdu
    return body
}

let heap0 = heapInUse(), rss0 = residentBytes()
var path = LinkDataPath(aclDataLength: 251, aclBufferCount: 8)
var subscribed = 0
for k in 0..<count {
    let handle = UInt16(k)
    path.opened(HostLink(handle: handle, peerAddress: BluetoothAddress(rawValue: 0x4000_0000_0000 | UInt64(k)), peerAddressType: .random, role: .peripheral))
    var sent = 0
    for pdu in [[0x02, 0x05, 0x02], [0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00]] as [[UInt8]] {
        for output in path.receive(acl: acl(handle, att: pdu), database: database, validateWrite: { _, _ in nil }, now: now) {
            if case .send = output { sent += 1 }
            if case .event(.subscriptionChanged) = output { subscribed += 1 }
        }
    }
    _ = path.completed(sent, handle: handle)
}
let heap1 = heapInUse(), rss1 = residentBytes()

var building = 0
for k in 0..<count {
    // First fragment of a 200-byte ATT Write Request: 23 bytes of it.
    _ = path.receive(acl: acl(UInt16(k), att: [0x12, 0x0C, 0x00] + [UInt8](repeating: 0xAB, count: 20), announcing: 200), database: database, validateWrite: { _, _ in nil }, now: now)
    let c = path.reassemblyCounters
    if c.continuationsWithoutStart + c.interruptedFrames + c.framesTooLong + c.overruns + c.invalidBoundaries == 0 { building += 1 }
}
let heap2 = heapInUse(), rss2 = residentBytes()

let open = path.openLinks.count
print("link-memory: \(grouped(count)) links open (\(grouped(subscribed)) subscribed after an MTU exchange to 517, \(grouped(building)) with a half-built frame, \(path.counters.unknownHandle + path.counters.malformedACL) packets refused)")
print("GATTConnection inline size \(MemoryLayout<GATTConnection>.size) bytes")
print("per link, idle after MTU exchange + CCCD write: heap \(grouped((heap1 - heap0) / count)) bytes, RSS \(grouped((rss1 - rss0) / count)) bytes")
print("per link, + half-built 200-byte L2CAP frame:     heap \(grouped((heap2 - heap1) / count)) bytes more, RSS \(grouped((rss2 - rss1) / count)) bytes more")
print("total: heap \(grouped((heap2 - heap0) / count)) bytes per link, RSS \(grouped((rss2 - rss0) / count)) bytes per link (\(grouped(open)) links)")
