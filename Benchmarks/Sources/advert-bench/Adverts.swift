import AdvertCorpus
import BLEHost
import Foundation

/// The adverts one source gives every stage: the HCI event packets back to back in one buffer
/// (as a transport's receive buffer holds them), each event's time, the AD bytes of every report
/// back to back beside them, and who answers the node's connections. A node decodes each packet
/// from its read buffer while it is in cache; a million separately allocated arrays would make the
/// harness measure cache misses the node never has.
struct Adverts {
    /// "distinct", "repeats", or the capture's path.
    let name: String
    /// The btsnoop capture the adverts were read from; nil for a stream built in memory.
    let path: String?
    /// The capture file's bytes (the `capture` stage reads them); empty for a stream.
    let file: [UInt8]
    /// Event times in seconds from the first event.
    let events: CaptureEvents
    /// Seconds the adverts span: a pipeline pass replayed after another starts this much later.
    let duration: Double
    let phones: Phones
    /// The AD bytes of every report, in order.
    let data: PackedBytes

    var reportCount: Int { data.count }

    init(name: String, path: String?, file: [UInt8] = [], events: CaptureEvents, duration: Double, phones: Phones) {
        self.name = name
        self.path = path
        self.file = file
        self.events = events
        self.duration = duration
        self.phones = phones
        var data = PackedBytes()
        for range in events.ranges {
            guard case .le(.advertisingReport(let batch))? = try? HCIEvent(decoding: events.storage[range]) else { continue }
            for report in batch { data.append(report.data) }
        }
        self.data = data
    }

    /// A btsnoop capture (datalink 1002, H4), e.g. from capture-gen.
    init(capture path: String) throws {
        guard let contents = FileManager.default.contents(atPath: path) else { throw CaptureError(message: "cannot read \(path)") }
        let file = [UInt8](contents)
        var events = try CaptureEvents(btsnoop: file)
        let first = events.times.first ?? 0
        let duration = (events.times.last ?? 0) - first + 1
        events.times = events.times.map { $0 - first }
        self.init(name: path, path: path, file: file, events: events, duration: duration, phones: .corpus)
    }

    /// The events as a btsnoop capture (for the peer, which reads captures).
    func btsnoop() -> [UInt8] {
        var writer = CaptureWriter(reservingCapacity: events.storage.count + events.count * 25)
        for (k, range) in events.ranges.enumerated() {
            writer.append(event: Array(events.storage[range]), unixSeconds: CaptureGenerator.startTime + events.times[k])
        }
        return writer.bytes
    }
}

/// Byte strings back to back in one buffer.
struct PackedBytes {
    private var bytes: [UInt8] = []
    private var ends: [Int] = []

    var count: Int { ends.count }

    mutating func append(_ slice: ArraySlice<UInt8>) {
        bytes.append(contentsOf: slice)
        ends.append(bytes.count)
    }

    subscript(i: Int) -> ArraySlice<UInt8> { bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]] }
}
