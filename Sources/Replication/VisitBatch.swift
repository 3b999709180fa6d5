import Sightings
import VenueDiary

/// What a node publishes to `venue-beacon/node/<node>/visits`: a run of visit states with
/// consecutive change numbers of one diary.
///
/// `prev` is the change after which the batch starts: the batch holds every visit whose latest
/// change lies in `prev` (excluded) to its last visit's change (included), lowest first. The hub
/// may acknowledge the batch's last change only if it already holds everything up to `prev`
/// (otherwise an earlier batch was lost on the way: a gap), see `HubStore.commit`.
///
/// Binary, big-endian: version 1, the diary id (string), `prev`, a visit count (u16), then each
/// visit: visit id, change, kind (string), payload (u16 length), metadata (u8 0xFF = none, else
/// its length), check-in, last seen, check-out (a flag byte, then the time when 1), samples (u32),
/// RSSI max (i16), RSSI sum (i64), flags (bit 0: clock uncorrected; bit 1: shared identity, which a
/// hub older than that bit refuses as an unknown flag: upgrade the hub first).
public struct VisitBatch: Sendable, Equatable {
    public static let version: UInt8 = 1
    /// A batch is at most this many visits (about 60 KB of Herald payloads).
    public static let maximumVisits = 400

    public var diary: String
    public var prev: Int64
    public var visits: [ReplicatedVisit]

    public init(diary: String, prev: Int64, visits: [ReplicatedVisit]) {
        self.diary = diary
        self.prev = prev
        self.visits = visits
    }

    /// The last change the batch carries (`prev` when it is empty).
    public var last: Int64 { visits.last?.change ?? prev }

    public func encoded() -> [UInt8] {
        var out = WireWriter()
        out.bytes.reserveCapacity(32 + visits.count * 200)
        out.u8(Self.version)
        out.shortString(diary)
        out.i64(prev)
        out.u16(UInt16(visits.count))
        for visit in visits {
            out.i64(visit.visitID)
            out.i64(visit.change)
            out.shortString(visit.kind.rawValue)
            out.data(visit.payload)
            if let metadata = visit.metadata, metadata.count < 0xFF {
                out.u8(UInt8(metadata.count))
                out.bytes.append(contentsOf: metadata)
            } else {
                out.u8(0xFF)
            }
            out.double(visit.checkIn)
            out.double(visit.lastSeen)
            if let checkOut = visit.checkOut {
                out.u8(1)
                out.double(checkOut)
            } else {
                out.u8(0)
            }
            out.u32(UInt32(clamping: visit.samples))
            out.u16(UInt16(bitPattern: Int16(clamping: visit.rssiMax)))
            out.i64(Int64(visit.rssiSum))
            out.u8((visit.clockUncorrected ? 1 : 0) | (visit.sharedIdentity ? 2 : 0))
        }
        return out.bytes
    }

    /// Reads a batch, refusing anything malformed: an unknown version, a truncated or overlong
    /// message, an unknown kind, a time that is not a finite number, changes not above `prev`
    /// and strictly rising.
    public init(decoding bytes: [UInt8]) throws {
        var reader = WireReader(bytes)
        let version = try reader.u8("version")
        guard version == Self.version else { throw WireFormatError("visit batch version \(version), this build reads \(Self.version)") }
        diary = try reader.shortString("diary id")
        guard !diary.isEmpty else { throw WireFormatError("the diary id is empty") }
        prev = try reader.i64("prev")
        let count = Int(try reader.u16("visit count"))
        guard count <= Self.maximumVisits else { throw WireFormatError("\(count) visits in one batch; at most \(Self.maximumVisits)") }
        visits = []
        visits.reserveCapacity(count)
        var last = prev
        for index in 0..<count {
            func field() -> String { "visit \(index + 1)" }
            let visitID = try reader.i64(field() + " id")
            let change = try reader.i64(field() + " change")
            guard change > last else { throw WireFormatError("\(field()): change \(change) does not follow \(last)") }
            last = change
            let kindText = try reader.shortString(field() + " kind")
            guard let kind = PayloadKind(rawValue: kindText) else { throw WireFormatError("\(field()): unknown kind '\(kindText)'") }
            let payload = try reader.data(field() + " payload")
            let metadataLength = try reader.u8(field() + " metadata length")
            let metadata = metadataLength == 0xFF ? nil : Array(try reader.take(Int(metadataLength), field() + " metadata"))
            let checkIn = try reader.double(field() + " check-in")
            let lastSeen = try reader.double(field() + " last seen")
            let checkOut: Double?
            switch try reader.u8(field() + " check-out flag") {
            case 0: checkOut = nil
            case 1: checkOut = try reader.double(field() + " check-out")
            case let flag: throw WireFormatError("\(field()): check-out flag \(flag)")
            }
            let samples = Int(try reader.u32(field() + " samples"))
            let rssiMax = Int(Int16(bitPattern: try reader.u16(field() + " rssi max")))
            let rssiSum = Int(try reader.i64(field() + " rssi sum"))
            let flags = try reader.u8(field() + " flags")
            guard flags & ~3 == 0 else { throw WireFormatError("\(field()): unknown flags \(flags)") }
            visits.append(
                ReplicatedVisit(
                    visitID: visitID, change: change, kind: kind, payload: payload, metadata: metadata, checkIn: checkIn,
                    lastSeen: lastSeen, checkOut: checkOut, samples: samples, rssiMax: rssiMax, rssiSum: rssiSum,
                    clockUncorrected: flags & 1 == 1, sharedIdentity: flags & 2 == 2))
        }
        try reader.finish("visit batch")
    }
}

extension ReplicatedVisit {
    /// A diary row with the change its latest write got (``VenueDiary/DiaryStore/changes(after:limit:)``).
    public init(change: Int64, visit: Visit) {
        self.init(
            visitID: visit.id ?? 0, change: change, kind: visit.kind, payload: visit.payload, metadata: visit.metadata,
            checkIn: visit.checkIn, lastSeen: visit.lastSeen, checkOut: visit.checkOut, samples: visit.samples,
            rssiMax: visit.rssiMax, rssiSum: visit.rssiSum, clockUncorrected: visit.clockUncorrected,
            sharedIdentity: visit.sharedIdentity)
    }
}
