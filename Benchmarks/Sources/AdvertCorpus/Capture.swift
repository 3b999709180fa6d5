import BLEHost
import Foundation

/// A capture read back through BLEHost's btsnoop reader and H4 framing: the HCI event packets it
/// holds, stored back to back in one buffer (as a transport's receive buffer would hold them).
public struct CaptureEvents: Sendable {
    /// Event packets after the H4 type byte (event code, length, parameters), back to back.
    public var storage: [UInt8] = []
    public var ranges: [Range<Int>] = []
    /// Record time of each event, Unix seconds.
    public var times: [Double] = []
    /// Records that were not H4 events (skipped).
    public var otherRecords = 0

    public var count: Int { ranges.count }

    public init() {}

    /// Reads every record of a btsnoop (datalink 1002) file.
    public init(btsnoop file: [UInt8]) throws {
        var reader = ByteReader(file)
        let header = try BTSnoopHeader.read(from: &reader)
        guard header.datalink == .h4 else { throw CaptureError(message: "datalink \(header.datalink.rawValue), expected 1002 (H4)") }
        storage.reserveCapacity(file.count)
        while let record = try BTSnoopRecord.read(from: &reader) {
            let packet = try H4Packet(datagram: record.data[...])
            guard packet.type == .event else {
                otherRecords += 1
                continue
            }
            let start = storage.count
            storage.append(contentsOf: packet.body)
            ranges.append(start..<storage.count)
            times.append(Double(record.timestamp.unixMicroseconds) / 1_000_000)
        }
    }

    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw CaptureError(message: "cannot read \(path)") }
        try self.init(btsnoop: [UInt8](data))
    }
}

/// Writes a btsnoop capture (datalink 1002, H4) of HCI event packets received by the host.
public struct CaptureWriter: Sendable {
    public private(set) var bytes = BTSnoopHeader(datalink: .h4).bytes

    public init(reservingCapacity capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// One event packet (event code onwards) received at `unixSeconds`.
    public mutating func append(event body: [UInt8], unixSeconds: Double) {
        let record = BTSnoopRecord(
            packet: H4Packet(type: .event, body: body), direction: .received,
            timestamp: BTSnoopTimestamp(unixMicroseconds: Int64(unixSeconds * 1_000_000)))
        record.append(to: &bytes)
    }
}

public struct CaptureError: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
