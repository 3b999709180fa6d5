// link-memory: bytes held per link by the host's per-link state (issue 3): the link's
// GATTConnection (ATT bearer, GATT server state, client procedures), kept by connection handle as
// the runtime keeps it, and the link's entry in the ACL reassembler.
//
// `--links N` (10,000) links are created in-process, each brought to a realistic state: the peer
// exchanged MTUs (517) and subscribed to a notifying characteristic (CCCD written); then, in a
// second step, each link gets a half-built 200-byte L2CAP frame in the reassembler (a long write
// in flight). Measured per step: heap bytes in use (glibc mallinfo2) and resident set
// size (/proc/self/statm), as deltas divided by N; plus the inline size of a GATTConnection.
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

let count = option("--links", default: 10_000)
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

let heap0 = heapInUse(), rss0 = residentBytes()
var links: [UInt16: GATTConnection] = [:]
var subscribed = 0
for k in 0..<count {
    var connection = GATTConnection(link: UInt16(k))
    _ = connection.receive([0x02, 0x05, 0x02][...], database: database, now: now)  // Exchange MTU Request, 517
    let actions = connection.receive([0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0x01, 0x00][...], database: database, now: now)
    if actions.contains(where: { if case .subscriptionChanged = $0 { return true } else { return false } }) { subscribed += 1 }
    links[UInt16(k)] = connection  // keyed as the runtime keys links (real handles stop at 0x0EFF)
}
let heap1 = heapInUse(), rss1 = residentBytes()

var reassembler = ACLReassembler(maximumPayloadLength: 1024)
var incomplete = 0
for k in 0..<count {
    // First fragment of a 200-byte ATT PDU on CID 4: L2CAP length 200, then 23 bytes of it.
    var data: [UInt8] = [200, 0, 0x04, 0x00, 0x12]
    data += [UInt8](repeating: 0xAB, count: 22)
    let packet = ACLPacket(header: ACLHeader(handle: UInt16(k), boundary: ACLPacketBoundary(rawValue: 0b10), length: UInt16(data.count)), data: data[...])
    if case .incomplete = reassembler.receive(packet) { incomplete += 1 }
}
let heap2 = heapInUse(), rss2 = residentBytes()

let mtu = links.values.first?.mtu ?? 0
print("link-memory: \(grouped(count)) links (MTU \(mtu), \(grouped(subscribed)) subscribed, \(grouped(incomplete)) with a half-built frame)")
print("GATTConnection inline size \(MemoryLayout<GATTConnection>.size) bytes (stride \(MemoryLayout<GATTConnection>.stride))")
print("per link, idle after MTU exchange + CCCD write: heap \(grouped((heap1 - heap0) / count)) bytes, RSS \(grouped((rss1 - rss0) / count)) bytes")
print("per link, + half-built 200-byte L2CAP frame:     heap \(grouped((heap2 - heap1) / count)) bytes more, RSS \(grouped((rss2 - rss1) / count)) bytes more")
print("total for \(grouped(count)) links: heap \(grouped(heap2 - heap0)) bytes, RSS \(grouped(rss2 - rss0)) bytes")
